/// <reference lib="dom" />
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { connectApi, type ApiSocket } from './support/api-socket';
import { launchChromium } from './support/browser';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { freePort } from './support/ports';
import { openWindow, runDemo, screenshot, showView } from './window-fixtures/window-page';

/**
 * Issue 36: what a chat app in a browser tab has — the unread count in the tab's
 * title and keyboard shortcuts (with `?` listing them). In Debian's Chromium
 * against a real `homing gateway` on `homing demo` data (five conversations),
 * with a command agent for the local chat.
 */

const AGENT = fileURLToPath(new URL('./window-fixtures/slow-stream-agent.mjs', import.meta.url));

let browser: Browser;
let dataDir: string;
let gateway: RunningGateway;
let api: ApiSocket;

beforeAll(async () => {
  browser = await launchChromium();
  dataDir = mkdtempSync(join(tmpdir(), 'homing-window-conveniences-'));
  runDemo(dataDir, ['--irc-port', String(await freePort())]);
  const configPath = join(dataDir, 'config.json');
  const config = JSON.parse(readFileSync(configPath, 'utf8')) as Record<string, unknown>;
  writeFileSync(configPath, JSON.stringify({ ...config, agent: { type: 'command', command: process.execPath, args: [AGENT, '--word-ms', '1'] } }));
  gateway = await startHeadlessGateway(['--data-dir', dataDir]);
  api = await connectApi(gateway);
});
afterAll(async () => {
  api?.close();
  await gateway?.stop();
  await browser?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The conversation titles, in the list's order, once the demo's conversations are listed (before, only the local chat's placeholder is). */
async function listed(page: Page): Promise<string[]> {
  await expect.poll(() => page.getByTestId('conversation').count(), { timeout: 15_000 }).toBeGreaterThanOrEqual(5);
  return page.locator('[data-testid="conversation"] .conversation-title').evaluateAll((titles) => titles.map((title) => title.firstChild?.textContent ?? ''));
}

/** The list's button for the conversation titled `title` (its title starts with it: "alice" is not "#homing", where alice spoke). */
const conversation = (page: Page, title: string) =>
  page.getByTestId('conversation').filter({ has: page.locator('.conversation-title', { hasText: new RegExp(`^${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`) }) });

const openTitle = (page: Page) => page.locator('#transcript-title').textContent();
const focusedId = (page: Page) => page.evaluate(() => document.activeElement?.id ?? null);

describe('the tab title', () => {
  for (const width of [360, 1280]) {
    it(`counts unread messages: "(2) Homing" while a conversation not on screen gets them, plain "Homing" once it is read (${width} px)`, async () => {
      const { page, errors } = await openWindow(browser, gateway.url, { width });
      const titles = await listed(page);
      // What was there before the window first looked counts as read.
      expect(await page.title()).toBe('Homing');
      if (width > 640) await conversation(page, 'bob').click();
      // At 360 px the list shows: no conversation is on screen, the local chat included.
      await api.call('sendLocalMessage', { text: `unread ${width}` });
      await expect.poll(() => page.title(), { timeout: 20_000 }).toBe('(2) Homing');
      await conversation(page, 'Local chat').getByTestId('unread').getByText('2').waitFor();
      // Counted in any view.
      await showView(page, 'status');
      expect(await page.title()).toBe('(2) Homing');
      await showView(page, 'conversations');
      await conversation(page, 'Local chat').click();
      await expect.poll(() => page.title()).toBe('Homing');
      expect(await page.getByTestId('unread').count()).toBe(0);
      expect(titles.length).toBeGreaterThanOrEqual(5);
      expect(errors).toEqual([]);
      await page.close();
    }, 40_000);
  }
});

describe('keyboard shortcuts', () => {
  it('Alt+↓ and Alt+↑ move through the conversations, also from the message box (1280 px)', async () => {
    const { page, errors } = await openWindow(browser, gateway.url, { width: 1280 });
    const titles = await listed(page);
    await conversation(page, titles[0]!).click();
    await expect.poll(() => openTitle(page)).toBe(titles[0]);
    // Pressed in the list, focus moves along with the open conversation.
    await page.keyboard.press('Alt+ArrowDown');
    await expect.poll(() => openTitle(page)).toBe(titles[1]);
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-current'))).toBe('true');
    await page.keyboard.press('Alt+ArrowDown');
    await expect.poll(() => openTitle(page)).toBe(titles[2]);
    await page.keyboard.press('Alt+ArrowUp');
    await expect.poll(() => openTitle(page)).toBe(titles[1]);
    // The top stays the top.
    await page.keyboard.press('Alt+ArrowUp');
    await page.keyboard.press('Alt+ArrowUp');
    await expect.poll(() => openTitle(page)).toBe(titles[0]);

    // From the local chat's message box: what was typed stays, the next conversation opens.
    const local = titles.indexOf('Local chat');
    await conversation(page, 'Local chat').click();
    await page.getByLabel('Message to your agent').fill('half a thought');
    await page.getByLabel('Message to your agent').press('Alt+ArrowDown');
    await expect.poll(() => openTitle(page)).toBe(titles[local + 1]);
    expect(errors).toEqual([]);
    await page.close();
  });

  for (const width of [360, 1280]) {
    it(`c writes to the agent, / and Ctrl+Shift+F search, and single keys type as usual in a field (${width} px)`, async () => {
      const { page, errors } = await openWindow(browser, gateway.url, { width });
      await listed(page);
      if (width > 640) await conversation(page, 'alice').click();

      await page.keyboard.press('c');
      await expect.poll(() => focusedId(page)).toBe('composer-input');
      expect(await openTitle(page)).toBe('Local chat');
      expect(await page.getByLabel('Message to your agent').isVisible()).toBe(true);
      // In the message box the keys are text: nothing opens, nothing moves.
      await page.keyboard.type('c/? typed');
      expect(await page.getByLabel('Message to your agent').inputValue()).toBe('c/? typed');
      expect(await page.getByRole('dialog').count()).toBe(0);
      expect(await focusedId(page)).toBe('composer-input');

      // Ctrl+Shift+F works from the message box too; Ctrl+F stays the browser's.
      await page.keyboard.press('Control+Shift+F');
      await expect.poll(() => focusedId(page)).toBe('conversation-search');
      expect(await page.locator('#conversation-search').isVisible()).toBe(true);
      await page.keyboard.type('bob/c');
      expect(await page.locator('#conversation-search').inputValue()).toBe('bob/c');
      await page.locator('#conversation-search').fill('');

      // `/` from outside any field.
      await conversation(page, 'alice').click();
      await page.getByTestId('chat-log').focus();
      await page.keyboard.press('/');
      await expect.poll(() => focusedId(page)).toBe('conversation-search');
      expect(await page.locator('#conversation-search').inputValue()).toBe('');
      expect(await page.locator('#conversation-search').isVisible()).toBe(true);
      await screenshot(page, `shortcut-search-light-${width}`);
      expect(errors).toEqual([]);
      await page.close();
    });

    it(`? lists the shortcuts in a dialog that Esc closes, focus back where it was (${width} px)`, async () => {
      const { page, errors } = await openWindow(browser, gateway.url, { width });
      await listed(page);
      await conversation(page, 'alice').click();
      const log = page.getByTestId('chat-log');
      await log.focus();
      await page.keyboard.press('?');
      const dialog = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
      await dialog.waitFor();
      // Focus is in the dialog, on its Close button; it fits the window.
      expect(await page.evaluate(() => document.activeElement?.closest('dialog') !== null && document.activeElement?.textContent === 'Close')).toBe(true);
      const box = (await dialog.boundingBox())!;
      expect(box.x >= 0 && box.x + box.width <= width).toBe(true);
      const listedText = await dialog.textContent();
      for (const what of ['Next conversation', 'Previous conversation', 'Write to your agent', 'Search conversations', 'Show these shortcuts']) expect(listedText).toContain(what);
      // While it is open, the window's shortcuts wait.
      await page.keyboard.press('Alt+ArrowDown');
      expect(await openTitle(page)).toBe('alice');
      await screenshot(page, `shortcuts-dialog-light-${width}`);
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      await expect.poll(() => log.evaluate((element) => element === document.activeElement)).toBe(true);

      // The header's ? button opens it too, and gets focus back.
      const button = page.getByRole('button', { name: 'Keyboard shortcuts' });
      await button.click();
      await dialog.waitFor();
      await dialog.getByRole('button', { name: 'Close' }).click();
      await dialog.waitFor({ state: 'detached' });
      await expect.poll(() => button.evaluate((element) => element === document.activeElement)).toBe(true);
      expect(errors).toEqual([]);
      await page.close();
    });
  }

  it('Alt+↓ on a 360 px window opens the next conversation from the list', async () => {
    const { page, errors } = await openWindow(browser, gateway.url, { width: 360 });
    const titles = await listed(page);
    // Nothing opened yet: the local chat counts as the current one.
    const local = titles.indexOf('Local chat');
    await page.keyboard.press('Alt+ArrowDown');
    await expect.poll(() => openTitle(page)).toBe(titles[local + 1]);
    expect(await page.locator('#transcript-title').isVisible()).toBe(true);
    expect(await page.getByTestId('conversation').first().isVisible()).toBe(false);
    expect(errors).toEqual([]);
    await page.close();
  });
});
