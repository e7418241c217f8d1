import { describe, expect, it } from 'vitest';
import { ESLint } from 'eslint';
import { REPO_ROOT } from './support/gateway-process';

/**
 * The rule that keeps the gateway core free of electron is the lint config itself:
 * these tests lint snippets as if they sat in the core, so breaking the rule (or
 * the config) fails here and in `npm run lint`.
 */
describe('the gateway core never imports electron', () => {
  const eslint = new ESLint({ cwd: REPO_ROOT });

  async function errorsFor(code: string, filePath: string): Promise<string[]> {
    const [result] = await eslint.lintText(code, { filePath });
    return (result?.messages ?? []).filter((message) => message.severity === 2).map((message) => message.message);
  }

  it.each([
    ['an import', "import { app } from 'electron';\nvoid app;\n"],
    ['a type import', "import type { App } from 'electron';\nexport type A = App;\n"],
    ['a re-export', "export { app } from 'electron';\n"],
    ['a subpath import', "import { ipcMain } from 'electron/main';\nvoid ipcMain;\n"],
    ['a dynamic import', "export const e = await import('electron');\n"],
    ['a require', "// eslint-disable-next-line @typescript-eslint/no-require-imports\nexport const e = require('electron');\n"],
  ])('rejects %s under src/main/gateway', async (_kind, code) => {
    const errors = await errorsFor(code, `${REPO_ROOT}src/main/gateway/sneaky.ts`);
    expect(errors.join('\n')).toMatch(/never (import|require) electron/);
  });

  it("applies the same rule to the headless mode, the CLI, the shared protocol and the shell's logic", async () => {
    for (const dir of ['src/main/headless', 'src/main/cli', 'src/shared', 'src/main']) {
      const errors = await errorsFor("import { app } from 'electron';\nvoid app;\n", `${REPO_ROOT}${dir}/x.ts`);
      expect(errors.join('\n'), dir).toMatch(/never import electron/);
    }
  });

  it('allows electron only where the shell wires real Electron objects, and in the preload', async () => {
    for (const file of ['src/main/index.ts', 'src/main/gateway-process.ts', 'src/preload/index.ts']) {
      const errors = await errorsFor("import { app } from 'electron';\nvoid app;\n", `${REPO_ROOT}${file}`);
      expect(errors, file).toEqual([]);
    }
  });

  it('finds no electron import in the gateway core as it is', async () => {
    const results = await eslint.lintFiles(['src/main/gateway/**/*.ts']);
    const electronErrors = results.flatMap((result) =>
      result.messages.filter((message) => /electron/.test(message.message)).map((message) => `${result.filePath}: ${message.message}`),
    );
    expect(results.length).toBeGreaterThan(5);
    expect(electronErrors).toEqual([]);
  });
});
