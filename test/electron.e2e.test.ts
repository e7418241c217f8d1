import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MenuItemModel } from '../src/main/tray-menu';

/**
 * The tray app itself, driven by Playwright's Electron support: it opens, shows
 * its window, has its tray menu, and quits from that menu. It needs Electron's
 * binary, which Electron fetches on first use on a machine with internet; where the
 * binary is missing (CI here has no internet) it is skipped, saying why.
 * Run `npm start` once first so better-sqlite3 is built for Electron's ABI,
 * or the gateway process cannot open its database (the window and tray still work).
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ELECTRON_DIR = join(ROOT, 'node_modules', 'electron');

function electronBinary(): string | undefined {
  const pathFile = join(ELECTRON_DIR, 'path.txt');
  if (!existsSync(pathFile)) return undefined;
  const binary = join(ELECTRON_DIR, 'dist', readFileSync(pathFile, 'utf8').trim());
  return existsSync(binary) ? binary : undefined;
}

const binary = electronBinary();
const built = existsSync(join(ROOT, 'out', 'main', 'index.js'));
const display = process.platform !== 'linux' || Boolean(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);
const skipReason = !binary
  ? "Electron's binary is not installed (node_modules/electron/dist is missing: Electron fetches it on first use, e.g. npm start, on a machine with internet)"
  : !built
    ? 'the app is not built (run npm run build)'
    : !display
      ? 'no display (run under xvfb-run on Linux)'
      : undefined;
if (skipReason) console.warn(`electron.e2e: skipped: ${skipReason}`);

type Shell = { trayMenu(): readonly MenuItemModel[]; trayImage(): string | undefined; click(action: string): void };

describe.skipIf(skipReason !== undefined)('the tray app under Electron', () => {
  let dataDir = '';
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-electron-'));
  });
  afterAll(() => {
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('opens its window, has its tray menu, and quits from the tray', async () => {
    const { _electron } = await import('playwright-core');
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
    delete env.ELECTRON_RUN_AS_NODE;
    const app = await _electron.launch({
      args: [ROOT],
      cwd: ROOT,
      env: { ...env, HOMING_DATA_DIR: dataDir, HOMING_TEST_HOOKS: '1' },
      timeout: 60_000,
    });
    const closed = new Promise<void>((resolve) => app.on('close', () => resolve()));
    try {
      const window = await app.firstWindow({ timeout: 30_000 });
      await window.waitForLoadState('domcontentloaded');
      expect(await window.title()).toMatch(/^Homing/);
      expect(await app.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows().length)).toBe(1);
      // The window is sandboxed: the page has no Node.
      expect(await window.evaluate(() => typeof (globalThis as { require?: unknown }).require)).toBe('undefined');

      const labels = async (): Promise<string[]> =>
        (await app.evaluate(() => (globalThis as unknown as { homingShell: Shell }).homingShell.trayMenu())).map((item) =>
          item.type === 'separator' ? '---' : item.label,
        );
      const menu = await labels();
      expect(menu).toEqual(expect.arrayContaining(['Open Homing', 'Sweep now', 'Start at login', 'Open data folder', 'Open logs', 'Quit Homing']));
      expect(await app.evaluate(() => (globalThis as unknown as { homingShell: Shell }).homingShell.trayImage())).toMatch(/^tray-.*\.png$/);

      // Closing the window hides it to the tray; the app keeps running.
      await app.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows()[0]?.close());
      expect(await app.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows()[0]?.isVisible())).toBe(false);

      await app.evaluate(() => (globalThis as unknown as { homingShell: Shell }).homingShell.click('quit'));
      await closed;
      expect(existsSync(join(dataDir, 'logs', 'main.log'))).toBe(true);
    } finally {
      await app.close().catch(() => undefined);
    }
  }, 120_000);
});
