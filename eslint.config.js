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
  // The core, the headless mode, the CLI, the supervisor and the shared protocol
  // must load under plain Node: only src/main/index.ts, the shell's own files and
  // the preload may touch electron.
  {
    files: ['src/main/gateway/**', 'src/main/headless/**', 'src/main/cli/**', 'src/shared/**', 'src/main/supervisor.ts'],
    rules: noElectron,
  },
);
