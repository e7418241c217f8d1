/// <reference lib="dom" />
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './support/browser';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { openWindow, screenshot, showView, VIEWS } from './window-fixtures/window-page';

/**
 * Issue 13, points 1 and 2, in Debian's Chromium against a real `homing gateway`:
 * a fresh install reaches the local chat at 360 px, and a window whose gateway
 * stops says so within 3 s, shows what it last knew as such, and reconnects by
 * itself when the gateway starts again on the same data directory.
 */

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

/** Internal API method names: nothing a user reads may contain them. */
const METHOD_NAMES = /getOverview|listSessions|sendLocalMessage|getTranscript|listDeliveries|getStatus|getConfig/;

describe('a fresh install', () => {
  let dataDir: string;
  let gateway: RunningGateway;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-window-fresh-'));
    gateway = await startHeadlessGateway(['--data-dir', dataDir]);
  });
  afterAll(async () => {
    await gateway?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  for (const width of [360, 1280]) {
    it(`reaches the local chat at ${width} px: list → chat → back`, async () => {
      const { page, errors } = await openWindow(browser, gateway.url, { width });
      const entry = page.getByTestId('conversation').filter({ hasText: 'Local chat' });
      await entry.waitFor();
      if (width === 360) expect(await page.getByTestId('composer').isVisible()).toBe(false);
      await entry.click();
      await page.getByTestId('composer').waitFor();
      await page.getByLabel('Message to your agent').fill('hello');
      await page.getByRole('button', { name: 'Send' }).click();
      await page.getByTestId('chat-assistant').first().waitFor();
      if (width === 360) {
        await page.getByRole('button', { name: 'Back to conversations' }).click();
        await entry.waitFor();
        expect(await page.getByTestId('composer').isVisible()).toBe(false);
      }
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      expect(errors).toEqual([]);
      await page.close();
    });
  }
});

describe('when the gateway stops and starts again', () => {
  let dataDir: string;
  let gateway: RunningGateway;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-window-gone-'));
    gateway = await startHeadlessGateway(['--data-dir', dataDir]);
  });
  afterAll(async () => {
    await gateway?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const connectionState = (page: Page) => page.getByTestId('connection').getAttribute('data-state');

  it('says "gone" within 3 s, shows only last-known data with actions off, and the same tab reconnects without a reload', async () => {
    const pages: Page[] = [];
    for (const scheme of ['light', 'dark'] as const) {
      for (const width of [360, 1280]) {
        const { page } = await openWindow(browser, gateway.url, { width, scheme });
        await page.getByTestId('summary').getByText('nothing owed').waitFor();
        // Every view seen once while connected, so the window knows something about each.
        await showView(page, 'platforms');
        await page.getByRole('button', { name: 'Edit agent' }).waitFor();
        await showView(page, 'status');
        await page.getByTestId('gateway-version').getByText(/\d/).waitFor();
        await showView(page, 'conversations');
        await page.evaluate(() => ((window as unknown as { stayedLoaded: boolean }).stayedLoaded = true));
        pages.push(page);
      }
    }
    const url = gateway.url;
    await gateway.stop();
    const stoppedAt = Date.now();
    for (const page of pages) await expect.poll(() => connectionState(page), { timeout: 3_000, interval: 100 }).toBe('gone');
    expect(Date.now() - stoppedAt).toBeLessThan(3_000);

    for (const [index, page] of pages.entries()) {
      const summary = (await page.getByTestId('summary').textContent()) ?? '';
      // Never "nothing owed" as if it were current.
      expect(summary).toMatch(/^Last known: nothing owed/);
      expect(await page.getByTestId('connection-advice').textContent()).toMatch(/start it again with npx homing gateway --data-dir /);
      // Switching views keeps what was known; nothing claims there is no data.
      for (const view of VIEWS) {
        await showView(page, view);
        await page.waitForTimeout(100);
        const text = (await page.locator('body').textContent()) ?? '';
        expect(text).not.toMatch(METHOD_NAMES);
        expect(text).not.toMatch(/restarts (its gateway )?by itself/);
        if (view === 'status') expect(await page.getByTestId('gateway-state').textContent()).toMatch(/^not connected/);
        if (view === 'status') expect(await page.getByRole('button', { name: 'Sweep now' }).isDisabled()).toBe(true);
        if (view === 'platforms') {
          // The form opens (it shows what was last known), but it cannot save.
          await page.getByRole('button', { name: 'Edit agent' }).click();
          expect(await page.getByRole('button', { name: 'Save agent' }).isDisabled()).toBe(true);
        }
        const scheme = index < 2 ? 'light' : 'dark';
        const width = index % 2 === 0 ? 360 : 1280;
        await screenshot(page, `disconnected-${view}-${scheme}-${width}`);
      }
      await showView(page, 'conversations');
      if (index % 2 === 0) await page.getByTestId('conversation').filter({ hasText: 'Local chat' }).click();
      await page.getByTestId('composer').waitFor();
      await page.getByLabel('Message to your agent').fill('are you there?');
      expect(await page.getByRole('button', { name: 'Send' }).isDisabled()).toBe(true);
    }

    gateway = await startHeadlessGateway(['--data-dir', dataDir], {}, { port: 'saved' });
    expect(gateway.url).toBe(url);
    for (const page of pages) {
      await expect.poll(() => connectionState(page), { timeout: 10_000, interval: 100 }).toBe('connected');
      await expect.poll(() => page.getByTestId('summary').textContent()).toBe('nothing owed');
      expect(await page.evaluate(() => (window as unknown as { stayedLoaded?: boolean }).stayedLoaded)).toBe(true);
      expect(await page.getByRole('button', { name: 'Send' }).isDisabled()).toBe(false);
      await page.close();
    }
  }, 60_000);
});
