/// <reference lib="dom" />
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { SessionPage } from '../src/shared/api';
import { connectApi, type ApiSocket } from './support/api-socket';
import { launchChromium } from './support/browser';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { waitUntil } from './support/wait';
import { openWindow, screenshot } from './window-fixtures/window-page';

/**
 * Issue 36: a chat opens at its newest message and follows new ones (a streamed
 * reply growing too) unless the reader scrolled up. In Debian's Chromium against
 * a real `homing gateway` whose agent streams its reply a word at a time.
 */

const AGENT = fileURLToPath(new URL('./window-fixtures/slow-stream-agent.mjs', import.meta.url));
/** Exchanges in the local chat before the window opens: far more than fit, at either width. */
const SEEDED = 8;

let browser: Browser;
let dataDir: string;
let gateway: RunningGateway;
let api: ApiSocket;

async function localMessageCount(): Promise<number> {
  const page = await api.call<SessionPage>('listSessions', {});
  return page.sessions.find((session) => session.platform === 'local' && session.current)?.messageCount ?? 0;
}

beforeAll(async () => {
  browser = await launchChromium();
  dataDir = mkdtempSync(join(tmpdir(), 'homing-window-follow-'));
  // 15 ms a word: a reply (~65 words) streams for about a second, long enough to watch it grow.
  writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ agent: { type: 'command', command: process.execPath, args: [AGENT, '--word-ms', '15'] } }));
  gateway = await startHeadlessGateway(['--data-dir', dataDir]);
  api = await connectApi(gateway);
  for (let n = 1; n <= SEEDED; n++) {
    await api.call('sendLocalMessage', { text: `seeded ${n}` });
    await waitUntil(`the reply to seeded ${n}`, async () => (await localMessageCount()) >= 2 * n, 20_000);
  }
}, 120_000);
afterAll(async () => {
  api?.close();
  await gateway?.stop();
  await browser?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

interface LogState {
  /** Pixels between what shows and the end of the log. */
  readonly toEnd: number;
  readonly scrollTop: number;
  /** How far the log can scroll at all. */
  readonly overflow: number;
  /** Whether the newest item's lower edge is inside the log's box. */
  readonly newestVisible: boolean;
}

function logState(page: Page): Promise<LogState> {
  return page.getByTestId('chat-log').evaluate((log) => {
    const items = log.querySelectorAll('[data-testid="chat-assistant"], [data-testid="chat-user"], [data-testid="chat-streaming"]');
    const newest = items[items.length - 1]!.getBoundingClientRect();
    const box = log.getBoundingClientRect();
    return {
      toEnd: log.scrollHeight - log.scrollTop - log.clientHeight,
      scrollTop: log.scrollTop,
      overflow: log.scrollHeight - log.clientHeight,
      newestVisible: newest.bottom <= box.bottom + 1 && newest.bottom > box.top,
    };
  });
}

async function openLocalChat(page: Page, width: number): Promise<void> {
  if (width <= 640) await page.getByTestId('conversation').filter({ hasText: 'Local chat' }).click();
  await page.getByTestId('composer').waitFor();
}

/** Sends through the composer and waits until the stored reply replaced the streamed one. */
async function send(page: Page, text: string): Promise<void> {
  await page.getByLabel('Message to your agent').fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByTestId('chat-assistant').filter({ hasText: `You said: ${text}.` }).waitFor({ timeout: 20_000 });
  await page.getByTestId('chat-streaming').waitFor({ state: 'detached' });
}

describe('the transcript follows the newest message', () => {
  for (const width of [360, 1280]) {
    it(`opens at the newest message, and again after a reload (${width} px)`, async () => {
      const { page, errors } = await openWindow(browser, gateway.url, { width });
      await openLocalChat(page, width);
      await page.getByTestId('chat-assistant').filter({ hasText: `You said: seeded ${SEEDED}.` }).waitFor();
      const opened = await logState(page);
      // More than fits: the log scrolls, and shows its end.
      expect(opened.overflow).toBeGreaterThan(500);
      await expect.poll(() => logState(page)).toMatchObject({ newestVisible: true });
      expect((await logState(page)).toEnd).toBeLessThanOrEqual(2);

      await page.reload();
      await page.getByTestId('summary').waitFor();
      await openLocalChat(page, width);
      await page.getByTestId('chat-assistant').filter({ hasText: `You said: seeded ${SEEDED}.` }).waitFor();
      await expect.poll(() => logState(page)).toMatchObject({ newestVisible: true });

      if (width <= 640) {
        // List → chat → back → chat: it opens at the newest again.
        await page.getByRole('button', { name: 'Back to conversations' }).click();
        await page.getByTestId('conversation').filter({ hasText: 'Local chat' }).click();
        await expect.poll(() => logState(page)).toMatchObject({ newestVisible: true });
      }
      expect(errors).toEqual([]);
      await page.close();
    });

    it(`keeps the newest reply in sight over three sends, while it streams too (${width} px)`, async () => {
      const { page, errors } = await openWindow(browser, gateway.url, { width });
      await openLocalChat(page, width);
      await page.getByTestId('chat-assistant').last().waitFor();
      for (let n = 1; n <= 3; n++) {
        const text = `follow ${width} ${n}`;
        // Every frame while the reply streams shows the log's end: sampled from before the send until the stored reply replaces it.
        await page.getByTestId('chat-log').evaluate((log) => {
          const samples: number[] = [];
          const sampling = { samples, stop: false };
          (window as unknown as { sampling: typeof sampling }).sampling = sampling;
          const sample = () => {
            if (log.querySelector('[data-testid="chat-streaming"]')) samples.push(log.scrollHeight - log.scrollTop - log.clientHeight);
            if (!sampling.stop) requestAnimationFrame(sample);
          };
          sample();
        });
        await page.getByLabel('Message to your agent').fill(text);
        await page.getByRole('button', { name: 'Send' }).click();
        await page.getByTestId('chat-assistant').filter({ hasText: `You said: ${text}.` }).waitFor({ timeout: 20_000 });
        const behind = await page.evaluate(() => {
          const sampling = (window as unknown as { sampling: { samples: number[]; stop: boolean } }).sampling;
          sampling.stop = true;
          return sampling.samples;
        });
        expect(behind.length).toBeGreaterThan(0);
        expect(Math.max(...behind)).toBeLessThanOrEqual(2);
        await page.getByTestId('chat-assistant').filter({ hasText: `You said: ${text}.` }).waitFor();
        await expect.poll(() => logState(page)).toMatchObject({ newestVisible: true });
      }
      await screenshot(page, `chat-follow-light-${width}`);
      expect(errors).toEqual([]);
      await page.close();
    }, 60_000);

    it(`stays where the reader scrolled up to while a reply arrives; back at the end it follows again (${width} px)`, async () => {
      const { page, errors } = await openWindow(browser, gateway.url, { width });
      await openLocalChat(page, width);
      await page.getByTestId('chat-assistant').last().waitFor();
      await expect.poll(() => logState(page)).toMatchObject({ newestVisible: true });
      const log = page.getByTestId('chat-log');
      await log.hover();
      await page.mouse.wheel(0, -400);
      await expect.poll(async () => (await logState(page)).toEnd).toBeGreaterThan(300);
      const jump = page.getByTestId('jump-newest');
      await jump.waitFor();
      const readingAt = (await logState(page)).scrollTop;

      await send(page, `while reading ${width}`);
      // The reply arrived below; the reader's place did not move, and "Newest ↓" offers the way down.
      const after = await logState(page);
      expect(Math.abs(after.scrollTop - readingAt)).toBeLessThanOrEqual(1);
      expect(after.newestVisible).toBe(false);
      expect(await jump.isVisible()).toBe(true);
      await screenshot(page, `chat-scrolled-up-light-${width}`);

      // Scrolling back down to the end follows again.
      await log.hover();
      await page.mouse.wheel(0, 100_000);
      await jump.waitFor({ state: 'detached' });
      await send(page, `back at the end ${width}`);
      await expect.poll(() => logState(page)).toMatchObject({ newestVisible: true });

      // Up again, then "Newest ↓": at the end, following, the button gone, focus in the log.
      await log.hover();
      await page.mouse.wheel(0, -400);
      await jump.click();
      await jump.waitFor({ state: 'detached' });
      expect((await logState(page)).toEnd).toBeLessThanOrEqual(2);
      expect(await log.evaluate((element) => element === document.activeElement)).toBe(true);
      await send(page, `after the button ${width}`);
      await expect.poll(() => logState(page)).toMatchObject({ newestVisible: true });
      expect(errors).toEqual([]);
      await page.close();
    }, 60_000);

    it(`lets the reader scroll up while a reply streams, without pulling them back (${width} px)`, async () => {
      const { page, errors } = await openWindow(browser, gateway.url, { width });
      await openLocalChat(page, width);
      await page.getByTestId('chat-assistant').last().waitFor();
      // The reader's scroll must land while words still arrive: on a slow machine the reply may be done first, then again.
      let readingAt: number | null = null;
      for (let attempt = 1; readingAt === null && attempt <= 3; attempt++) {
        const text = `scroll while streaming ${width} ${attempt}`;
        await page.getByLabel('Message to your agent').fill(text);
        await page.getByRole('button', { name: 'Send' }).click();
        await page.getByTestId('chat-streaming').getByText(/You said/).waitFor({ timeout: 20_000 });
        readingAt = await page.getByTestId('chat-log').evaluate((log) => {
          if (!log.querySelector('[data-testid="chat-streaming"]')) return null;
          log.scrollTop -= 400;
          return log.scrollTop;
        });
        await page.getByTestId('chat-assistant').filter({ hasText: `You said: ${text}.` }).waitFor({ timeout: 20_000 });
      }
      expect(readingAt).not.toBeNull();
      const after = await logState(page);
      expect(Math.abs(after.scrollTop - readingAt!)).toBeLessThanOrEqual(1);
      expect(after.newestVisible).toBe(false);
      await page.getByTestId('jump-newest').waitFor();
      expect(errors).toEqual([]);
      await page.close();
    }, 90_000);
  }
});
