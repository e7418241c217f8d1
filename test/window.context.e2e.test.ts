/// <reference lib="dom" />
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { SUMMARISE_REQUEST } from '../src/main/gateway/agents/system-prompt';
import { launchChromium } from './support/browser';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { startOpenAiStub, type OpenAiStub } from './support/openai-stub';
import { waitUntil } from './support/wait';
import { openWindow, screenshot } from './window-fixtures/window-page';

/**
 * In Debian's Chromium against a real `homing gateway` and a local
 * OpenAI-compatible stub: the window says which agent (and routing rule)
 * answers, and shows the summary turn a long conversation gets, saying what
 * was cut before it was condensed.
 */

let browser: Browser;
let dataDir: string;
let gateway: RunningGateway;
let stub: OpenAiStub;
/** Released by the test: the stub holds its next ordinary reply until then. */
let release: (() => void) | undefined;
beforeAll(async () => {
  browser = await launchChromium();
  stub = await startOpenAiStub(async (request) => {
    if (request.messages.at(-1)?.content === SUMMARISE_REQUEST) return 'You asked about **tea** four times.';
    if (request.messages.at(-1)?.content.startsWith('hold')) await new Promise<void>((resolve) => (release = resolve));
    return `A long answer about tea: ${'steep it well, '.repeat(40)}`;
  });
  dataDir = mkdtempSync(join(tmpdir(), 'homing-window-context-'));
  writeFileSync(
    join(dataDir, 'config.json'),
    JSON.stringify({
      agent: { type: 'openai', baseUrl: stub.baseUrl, model: 'base-model' },
      routing: [{ name: 'mine', match: { platform: 'local' }, agent: { model: 'local-model' } }],
      sessions: { contextTokens: 800 },
    }),
  );
  gateway = await startHeadlessGateway(['--data-dir', dataDir]);
});
afterAll(async () => {
  release?.();
  await gateway?.stop();
  await stub?.close();
  await browser?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the window and the turn context', () => {
  it('shows which agent answers while it works, and a long conversation\'s summary turn (1280 px)', async () => {
    const { page, errors } = await openWindow(browser, gateway.url, { width: 1280 });
    await page.getByTestId('composer').waitFor();
    const send = async (text: string) => {
      const before = await page.getByTestId('chat-assistant').count();
      await page.getByLabel('Message to your agent').fill(text);
      await page.getByRole('button', { name: 'Send' }).click();
      return before;
    };

    const before = await send('hold: which tea?');
    await page.getByTestId('answering-agent').getByText('openai · local-model, rule "mine" is answering…').waitFor();
    await page.getByTestId('live-marker').getByText('openai · local-model, rule "mine"').waitFor();
    await waitUntil('the held request at the stub', () => release !== undefined);
    release!();
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid="chat-assistant"]').length > n, before);

    // A paste three times the budget: the agent is shown it cut, and the summary line says so once it is condensed.
    const pasted = await send(`a long paste: ${'the kettle, the cups and the green tea; '.repeat(180)}`);
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid="chat-assistant"]').length > n, pasted);

    const condensed = (request: (typeof stub.requests)[number]) =>
      request.messages.at(-1)?.content === SUMMARISE_REQUEST && request.messages.some((message) => message.content.startsWith('a long paste'));
    for (let i = 1; !stub.requests.some(condensed) && i <= 10; i++) {
      const count = await send(`question ${i}: ${'how long do I steep green tea, '.repeat(6)}`);
      await page.waitForFunction((n) => document.querySelectorAll('[data-testid="chat-assistant"]').length > n, count);
    }
    // Condensing may take more than one round; each later summary folds in the earlier ones and their cuts.
    const summary = page.getByTestId('chat-summary').filter({ hasText: 'cut to fit first' }).last();
    await summary.waitFor();
    expect(await summary.locator('strong').textContent()).toBe('tea');
    expect(await summary.textContent()).toMatch(/Summary of \d+ earlier messages \(the agent sees this instead of them; (?:1 of them was|\d+ of them were) cut to fit first\)/);
    expect(stub.requests.every((request) => request.model === 'local-model')).toBe(true);
    await screenshot(page, 'chat-summary-1280');
    expect(errors).toEqual([]);
    await page.close();
  });
});
