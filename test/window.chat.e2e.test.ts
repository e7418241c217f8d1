/// <reference lib="dom" />
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium } from './support/browser';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { openWindow, screenshot, showView } from './window-fixtures/window-page';

/** Issue 13's chat conveniences in Debian's Chromium, against a real `homing gateway` with a command agent. */

const AGENT = fileURLToPath(new URL('./window-fixtures/markdown-agent.mjs', import.meta.url));

let browser: Browser;
let dataDir: string;
let gateway: RunningGateway;
beforeAll(async () => {
  browser = await launchChromium();
  dataDir = mkdtempSync(join(tmpdir(), 'homing-window-md-'));
  writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ agent: { type: 'command', command: process.execPath, args: [AGENT] } }));
  gateway = await startHeadlessGateway(['--data-dir', dataDir]);
});
afterAll(async () => {
  await gateway?.stop();
  await browser?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function openLocalChat(width: number, scheme: 'light' | 'dark' = 'light') {
  const opened = await openWindow(browser, gateway.url, { width, scheme });
  if (width <= 640) await opened.page.getByTestId('conversation').filter({ hasText: 'Local chat' }).click();
  await opened.page.getByTestId('composer').waitFor();
  return opened;
}

describe('the transcript', () => {
  for (const width of [360, 1280]) {
    it(`renders Markdown safely: code blocks and lists, and <script> in a reply stays text (${width} px)`, async () => {
      const { page, errors } = await openLocalChat(width);
      await page.getByLabel('Message to your agent').fill(`markdown please ${width}`);
      await page.getByRole('button', { name: 'Send' }).click();
      const reply = page.getByTestId('chat-assistant').last();
      await reply.locator('pre.code-block code').getByText('const answer = "<b>not bold</b>";').waitFor();
      expect(await reply.locator('strong').first().textContent()).toBe('bold');
      expect(await reply.locator('em').first().textContent()).toBe('italic');
      expect(await reply.locator('ul li').allTextContents()).toEqual(['first', 'second']);
      expect(await reply.locator('a').getAttribute('href')).toBe('https://example.org/docs');
      expect(await reply.locator('a').getAttribute('rel')).toBe('noopener noreferrer');
      // HTML in the reply is shown as text, never run or parsed.
      await reply.getByText('<script>window.pwned = true</script>', { exact: false }).waitFor();
      expect(await reply.locator('script, img, b').count()).toBe(0);
      expect(await page.evaluate(() => (window as unknown as { pwned?: boolean }).pwned)).toBeUndefined();
      // A day separator above the first message of the day.
      expect(await page.getByTestId('day-separator').first().textContent()).toBe('Today');
      await screenshot(page, `chat-markdown-light-${width}`);
      expect(errors).toEqual([]);
      await page.close();
    });

    it(`Stop cancels a slow agent's turn (${width} px)`, async () => {
      const { page, errors } = await openLocalChat(width, 'dark');
      await page.getByLabel('Message to your agent').fill('a slow one, please');
      await page.getByRole('button', { name: 'Send' }).click();
      const streaming = page.getByTestId('chat-streaming');
      await streaming.getByText(/word3/).waitFor({ timeout: 10_000 });
      // The window says which agent answers.
      expect(await page.getByTestId('answering-agent').textContent()).toBe('command · node markdown-agent.mjs is answering…');
      await page.getByTestId('stop-turn').click();
      // The turn ends long before its 400 words (60 s): the stored reply says it was cancelled.
      await page.getByTestId('chat-assistant').last().getByText('The answer to this message was cancelled.', { exact: false }).waitFor({ timeout: 5_000 });
      await streaming.waitFor({ state: 'detached', timeout: 5_000 });
      expect(await page.getByTestId('stop-turn').count()).toBe(0);
      await screenshot(page, `chat-stopped-dark-${width}`);
      expect(errors).toEqual([]);
      await page.close();
    });
  }

  it('Status shows the activity in plain words, kept across a reload, and the tail of the gateway log (360 and 1280 px)', async () => {
    for (const width of [360, 1280]) {
      const { page, errors } = await openLocalChat(width);
      await page.getByLabel('Message to your agent').fill(`activity ${width}`);
      await page.getByRole('button', { name: 'Send' }).click();
      await showView(page, 'status');
      const entries = page.getByTestId('activity-entry');
      const answered = entries.filter({ hasText: 'The agent answered.' });
      await answered.first().waitFor();
      const seen = await entries.count();
      await page.reload();
      await page.getByTestId('summary').waitFor();
      await showView(page, 'status');
      // Kept across the reload.
      await answered.first().waitFor();
      expect(await entries.count()).toBeGreaterThanOrEqual(seen);
      expect((await entries.allTextContents()).join('\n')).not.toMatch(/turn\.finished|delivery\.changed|platform\.state/);
      await page.getByTestId('log-tail').getByText(/gateway starting/).waitFor();
      await screenshot(page, `status-logs-light-${width}`);
      expect(errors).toEqual([]);
      await page.close();
    }
  });
});
