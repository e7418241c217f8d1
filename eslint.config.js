import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** Any way of loading electron: import, export-from, require(), import(). */
const noElectron = {
  'no-restricted-imports': [
    'error',
    {
      paths: [{ name: 'electron', message: 'The gateway core runs under plain Node: never import electron here.' }],
      patterns: [{ group: ['electron/*'], message: 'The gateway core runs under plain Node: never import electron here.' }],
    },
  ],
  'no-restricted-syntax': [
    'error',
    {
      selector: "CallExpression[callee.name='require'][arguments.0.value=/^electron(\\u002F|$)/]",
      message: 'The gateway core runs under plain Node: never require electron here.',
    },
    {
      selector: "ImportExpression[source.value=/^electron(\\u002F|$)/]",
      message: 'The gateway core runs under plain Node: never import electron here.',
    },
  ],
};

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'node_modules/**', 'test-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-empty-function': 'off',
    },
  },
  {
    files: ['src/renderer/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
  },
  // The core, the headless mode, the CLI, the shared protocol and the shell's
  // logic (tray state, menus, power, notifications… — they take the Electron
  // surface they use as an injected interface) must load under plain Node. Only
  // index.ts and gateway-process.ts wire real Electron objects, plus the preload.
  {
    files: ['src/main/**/*.ts', 'src/shared/**'],
    ignores: ['src/main/index.ts', 'src/main/gateway-process.ts'],
    rules: noElectron,
  },
);
