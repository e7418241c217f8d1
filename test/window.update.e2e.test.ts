import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { Gateway } from '../src/main/gateway/gateway';
import { silentLogger } from '../src/main/gateway/logger';
import { startHeadlessServer, type HeadlessServer } from '../src/main/headless/server';
import { launchChromium } from './support/browser';
import { REPO_ROOT } from './support/gateway-process';
import { waitUntil } from './support/wait';
import { openWindow, screenshot } from './window-fixtures/window-page';

/**
 * The update banner in Debian's Chromium. The gateway runs in this process so
 * its update check can be given a fake release feed (a spawned one never
 * checks: HOMING_NO_UPDATE_CHECK=1); the window is the built one (`npm run
 * build`), served by the real headless server.
 */

let browser: Browser;
let gateway: Gateway;
let server: HeadlessServer;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'homing-window-update-'));
  gateway = Gateway.start({
    dataDir,
    mode: 'headless',
    version: '0.2.0',
    logger: silentLogger,
    detectSleep: false,
    detectOllama: false,
    env: {},
    updateCheck: { fetch: async () => new Response(JSON.stringify({ tag_name: 'v0.3.0' })), firstCheckMs: 0 },
  });
  await gateway.ready;
  await waitUntil('the update check', async () => {
    const overview = await gateway.api.dispatch('getOverview', undefined);
    return overview.ok && (overview.value as { update?: unknown }).update != null;
  });
  server = await startHeadlessServer({
    port: 0,
    rendererDir: process.env.HOMING_RENDERER_DIR ?? join(REPO_ROOT, 'out', 'renderer'),
    api: gateway.api,
    logger: silentLogger,
  });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await gateway?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the update banner', () => {
  it('says a newer Homing is out, links its release page, and stays dismissed across a reload', async () => {
    for (const [width, scheme] of [
      [1280, 'light'],
      [360, 'dark'],
    ] as const) {
      const { page, errors } = await openWindow(browser, server.url, { width, scheme });
      const banner = page.getByTestId('update-banner');
      await banner.waitFor();
      expect(await banner.innerText()).toMatch(/^Homing v0\.3\.0 is available — what is new/);
      expect(await banner.getByRole('link').getAttribute('href')).toBe('https://github.com/homing-app/homing/releases/tag/v0.3.0');
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      await screenshot(page, `update-banner-${width}-${scheme}`);

      await banner.getByRole('button', { name: 'Dismiss: Homing v0.3.0' }).click();
      expect(await banner.count()).toBe(0);
      await page.reload();
      await page.getByText('nothing owed').waitFor();
      expect(await banner.count()).toBe(0);
      expect(errors).toEqual([]);
      await page.close();
    }
  });
});
