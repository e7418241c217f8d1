/// <reference lib="dom" />
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium } from './support/browser';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { count, openWindow, runDemo, screenshot, showView, VIEWS } from './window-fixtures/window-page';
import { freePort } from './support/ports';
import { editPlatform } from './window-platforms/open-form';

/**
 * The window in Debian's Chromium against a real `homing gateway` process, on the
 * data `homing demo` writes (every delivery state, IRC pointed at a closed port).
 */

const SLOW_AGENT = fileURLToPath(new URL('./window-fixtures/slow-stream-agent.mjs', import.meta.url));

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

describe('the window on demo data', () => {
  let dataDir: string;
  let gateway: RunningGateway;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-window-demo-'));
    runDemo(dataDir, ['--irc-port', String(await freePort())]);
    gateway = await startHeadlessGateway(['--data-dir', dataDir]);
  });
  afterAll(async () => {
    await gateway?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('saves a screenshot of each view in light and dark, at 360 px and 1280 px', async () => {
    const saved: string[] = [];
    for (const scheme of ['light', 'dark'] as const) {
      for (const width of [360, 1280]) {
        const { page, errors } = await openWindow(browser, gateway.url, { width, scheme });
        // Every view is in reach without scrolling sideways, down to a 360 px popover.
        const nav = page.getByRole('navigation', { name: 'Views' });
        expect(await nav.evaluate((element) => element.scrollWidth <= element.clientWidth)).toBe(true);
        for (const view of VIEWS) {
          const box = await page.locator(`nav button[data-view="${view}"]`).boundingBox();
          expect(box && box.x >= 0 && box.x + box.width <= width, `the ${view} tab is on screen at ${width} px`).toBe(true);
        }
        expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
        for (const view of VIEWS) {
          await showView(page, view);
          if (view === 'deliveries') await page.getByTestId('delivery-row').first().waitFor();
          if (view === 'conversations') await page.getByTestId('conversation').first().waitFor();
          if (view === 'platforms') await page.getByTestId('platform-irc').waitFor();
          if (view === 'status') await page.getByTestId('last-sweep').waitFor();
          saved.push(await screenshot(page, `${view}-${scheme}-${width}`));
        }
        expect(errors).toEqual([]);
        await page.close();
      }
    }
    expect(saved).toHaveLength(16);
    for (const path of saved) expect(existsSync(path)).toBe(true);
  });

  it('tells what is owed and why: the platform is down, a recipient is offline, a channel refuses, the attempt cap was reached', async () => {
    const { page } = await openWindow(browser, gateway.url);
    await expect.poll(() => page.getByTestId('summary').textContent()).toMatch(/4 replies owed · 1 needs you · IRC not connected/);
    await showView(page, 'deliveries');
    const rows = page.getByTestId('delivery-row');
    await rows.first().waitFor();
    const why = await page.getByTestId('delivery-why').allTextContents();
    expect(why.some((text) => /^Waiting: IRC: not connected — nothing answers at 127\.0\.0\.1:\d+/.test(text))).toBe(true);
    expect(why.some((text) => /^Retrying: IRC did not take it: bob is not online, so IRC cannot deliver it\. Homing tries again by itself\./.test(text))).toBe(true);
    // Failed for good is given up, not owed: it waits for nobody but you.
    await page.getByRole('tab', { name: 'Given up' }).click();
    await expect.poll(async () => (await page.getByTestId('delivery-why').allTextContents()).join('\n')).toMatch(/^Given up: Homing stopped trying after 5 attempts/m);
    const givenUp = await page.getByTestId('delivery-why').allTextContents();
    expect(givenUp.some((text) => /^Needs you: IRC refused it for good: .*#homelab.*Retry once that is fixed, or discard it\./.test(text))).toBe(true);
    await page.close();
  });

  it('Discard asks for confirmation, and the row leaves the owed count', async () => {
    const { page } = await openWindow(browser, gateway.url);
    await showView(page, 'deliveries');
    const first = page.locator('[data-testid="delivery-row"][data-state="failed"]').first();
    await first.waitFor();
    const id = await first.getAttribute('data-id');
    const row = page.locator(`[data-testid="delivery-row"][data-id="${id}"]`);
    const before = await count(page, 'owed');

    await row.getByRole('button', { name: /^Discard/ }).click({ timeout: 5_000 });
    const dialog = page.getByRole('dialog', { name: 'Discard this reply?' });
    await dialog.waitFor({ timeout: 5_000 });
    await dialog.getByRole('button', { name: 'Keep it' }).click({ timeout: 5_000 });
    await dialog.waitFor({ state: 'detached', timeout: 5_000 });
    expect(await count(page, 'owed')).toBe(before);

    // Escape is "Keep it" too, and focus goes back to the row's Discard button.
    const discardButton = row.getByRole('button', { name: /^Discard/ });
    await discardButton.click({ timeout: 5_000 });
    await dialog.waitFor({ timeout: 5_000 });
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached', timeout: 5_000 });
    await expect.poll(() => discardButton.evaluate((button) => button === document.activeElement)).toBe(true);
    expect(await count(page, 'owed')).toBe(before);
    expect(await row.getAttribute('data-state')).toBe('failed');

    await discardButton.click({ timeout: 5_000 });
    await dialog.getByRole('button', { name: 'Discard', exact: true }).click({ timeout: 5_000 });
    // Switch tabs at once, while the list is still gathering the change the discard caused:
    // the new tab must show its own rows, never a late read of the tab it left.
    await page.getByRole('tab', { name: 'Given up' }).click();
    await page.locator(`[data-testid="delivery-row"][data-id="${id}"]`).getByText('discarded', { exact: true }).waitFor();
    await page.waitForTimeout(600); // past the list's 250 ms coalescing of changes
    const states = await page.getByTestId('delivery-row').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-state')));
    expect(states.length).toBeGreaterThan(0);
    // Given up: abandoned (discarded or past the cap) or failed for good, nothing still owed.
    expect(states.every((state) => state === 'abandoned' || state === 'failed')).toBe(true);
    expect(states.filter((state) => state === 'failed')).toHaveLength(1);

    await page.getByRole('tab', { name: 'Owed' }).click();
    await expect.poll(() => count(page, 'owed')).toBe(before - 1);
    await expect.poll(() => page.locator(`[data-testid="delivery-row"][data-id="${id}"]`).count()).toBe(0);
    await page.close();
  });

  it('shows an API error where it happened: a bad IRC nick is named at the form', async () => {
    const { page, errors } = await openWindow(browser, gateway.url);
    await showView(page, 'platforms');
    await editPlatform(page, 'irc', 'IRC');
    await page.getByLabel('Nick', { exact: true }).fill('1bad');
    await page.getByRole('button', { name: 'Save IRC' }).click();
    const message = page.getByTestId('irc-form-message');
    await message.getByText(/platforms\.irc\.nick/).waitFor();
    expect(await message.getAttribute('role')).toBe('alert');
    // In the form's words, with the field at fault marked.
    expect(await message.textContent()).toMatch(/^Not saved: Nick must be an IRC nick/);
    expect(await page.getByLabel('Nick', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    // The rest of the window is still there.
    expect(await page.getByTestId('platform-irc').isVisible()).toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('reaches every view and action from the keyboard, with visible focus', async () => {
    const { page } = await openWindow(browser, gateway.url, { width: 1280 });
    const focused = () =>
      page.evaluate(() => {
        const element = document.activeElement as HTMLElement | null;
        if (!element || element === document.body) return null;
        const style = getComputedStyle(element);
        return {
          text: (element.getAttribute('aria-label') ?? element.textContent ?? '').trim(),
          view: element.getAttribute('data-view'),
          visible: element.matches(':focus-visible') && style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2,
        };
      });
    const tabTo = async (matches: (target: { text: string; view: string | null }) => boolean, limit = 80) => {
      for (let step = 0; step < limit; step++) {
        await page.keyboard.press('Tab');
        const target = await focused();
        if (target && matches(target)) {
          expect(target.visible, `focus on "${target.text}" must be visible`).toBe(true);
          return;
        }
      }
      throw new Error('the keyboard never reached the target');
    };
    for (const view of VIEWS) {
      await page.locator('body').click({ position: { x: 2, y: 2 } });
      await tabTo((target) => target.view === view);
      await page.keyboard.press('Enter');
      expect(await page.locator(`nav button[data-view="${view}"]`).getAttribute('aria-current')).toBe('page');
    }
    await page.locator('nav button[data-view="deliveries"]').focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('delivery-row').first().waitFor();
    for (const action of [/^(Retry|Send now)/, /^Discard/, /^Copy text/, /^Open conversation/, /^Retry all for IRC/, /^Given up$/]) {
      await tabTo((target) => action.test(target.text));
    }
    await page.locator('nav button[data-view="platforms"]').focus();
    await page.keyboard.press('Enter');
    // Each card's actions, then a form opened with Enter on its Edit (focus goes into the form).
    for (const action of [/^Edit agent$/, /^Reconnect$/, /^Edit IRC$/, /^Remove IRC$/, /^Add a platform$/]) await tabTo((target) => action.test(target.text));
    for (const [edit, save] of [['Edit IRC', /^Save IRC$/], ['Edit agent', /^Save agent$/]] as const) {
      await page.getByRole('button', { name: edit, exact: true }).focus();
      await page.keyboard.press('Enter');
      for (const action of [save, /^Test connection$/]) await tabTo((target) => action.test(target.text));
    }
    await page.locator('nav button[data-view="status"]').focus();
    await page.keyboard.press('Enter');
    await tabTo((target) => target.text === 'Sweep now');
    await page.close();
  });

  it('opens a delivery’s conversation in one click', async () => {
    const { page } = await openWindow(browser, gateway.url);
    await showView(page, 'deliveries');
    await page.getByRole('button', { name: 'Open conversation with alice' }).first().click();
    await page.locator('#transcript-title').getByText('alice').waitFor();
    await page.getByTestId('chat-assistant').getByText(/three days in the fridge/).waitFor();
    await page.close();
  });
});

describe('the local chat in the window', () => {
  let dataDir: string;
  let gateway: RunningGateway;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-window-chat-'));
    writeFileSync(
      join(dataDir, 'config.json'),
      JSON.stringify({ agent: { type: 'command', command: process.execPath, args: [SLOW_AGENT, '--word-ms', '40'] } }),
    );
    gateway = await startHeadlessGateway(['--data-dir', dataDir]);
  });
  afterAll(async () => {
    await gateway?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('streams the reply into the transcript without moving the composer, then shows it delivered', async () => {
    const { page, errors } = await openWindow(browser, gateway.url, { width: 1280 });
    const composer = page.getByTestId('composer');
    await page.getByLabel('Message to your agent').fill('hello from the window');
    const before = await composer.boundingBox();
    await page.getByRole('button', { name: 'Send' }).click();

    const streaming = page.getByTestId('chat-streaming');
    await streaming.getByText(/You said: hello from the window/).waitFor({ timeout: 10_000 });
    const positions = new Set<string>();
    const lengths: number[] = [];
    while ((await streaming.count()) > 0 && lengths.length < 200) {
      const box = await composer.boundingBox({ timeout: 1_000 });
      if (box) positions.add(`${Math.round(box.y)}:${Math.round(box.height)}`);
      // A short timeout: the bubble is replaced by the stored reply at any moment.
      lengths.push(((await streaming.textContent({ timeout: 100 }).catch(() => '')) ?? '').length);
      await page.waitForTimeout(30);
    }
    // Text arrived bit by bit while we watched, and the composer never moved.
    expect(new Set(lengths.filter((length) => length > 0)).size).toBeGreaterThan(3);
    expect([...positions]).toEqual([`${Math.round(before!.y)}:${Math.round(before!.height)}`]);

    const reply = page.getByTestId('chat-assistant').last();
    await reply.getByText(/Done\.$/).waitFor({ timeout: 10_000 });
    await reply.locator('[data-testid="delivery-tick"][data-state="delivered"]').waitFor({ timeout: 10_000 });
    expect(await page.getByLabel('Message to your agent').inputValue()).toBe('');
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});

describe('the Deliveries list at scale', () => {
  let dataDir: string;
  let gateway: RunningGateway;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-window-10k-'));
    // Ten thousand owed IRC replies, recorded through the real ledger by `homing demo --owed`.
    runDemo(dataDir, ['--irc-port', String(await freePort()), '--owed', '10000']);
    gateway = await startHeadlessGateway(['--data-dir', dataDir]);
  }, 60_000);
  afterAll(async () => {
    await gateway?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('renders 10 000 owed rows and scrolls to the last one', async () => {
    const { page, errors } = await openWindow(browser, gateway.url);
    await showView(page, 'deliveries');
    await page.getByTestId('delivery-row').first().waitFor();
    const total = await count(page, 'owed');
    expect(total).toBeGreaterThanOrEqual(10_000);
    // Only what is on screen is in the DOM.
    expect(await page.getByTestId('delivery-row').count()).toBeLessThan(40);
    const list = page.getByTestId('delivery-list');
    for (const fraction of [0.25, 0.5, 0.75, 1]) {
      await list.evaluate((element, f) => (element.scrollTop = (element.scrollHeight - element.clientHeight) * f), fraction);
      // The rows at that depth are loaded and shown (not the ones left from the previous position).
      await page.waitForFunction(
        (low) => Array.from(document.querySelectorAll('[data-testid="delivery-row"]')).some((row) => Number(row.getAttribute('aria-posinset')) >= low),
        Math.floor(total * fraction * 0.95),
      );
    }
    await page.locator(`[data-testid="delivery-row"][aria-posinset="${total}"]`).waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });
});
