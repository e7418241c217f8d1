import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { USUAL_AGENT_SERVERS } from '../src/main/gateway/agents/discovery';
import { launchChromium } from './support/browser';
import { FakeTelegram, type FakeUser } from './support/fake-telegram';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { startOpenAiStub, STUB_MODEL, type OpenAiStub } from './support/openai-stub';
import { waitUntil } from './support/wait';
import { openWindow, screenshot } from './window-fixtures/window-page';

/**
 * First run to the first answer, as a new user walks it, in Debian's Chromium
 * against the real headless gateway: the setup flow finds a model server on one
 * of the usual ports (the OpenAI stub, bound to the first of them that is free
 * here), runs a test message through it and shows the answer; Telegram (the
 * fake Bot API) is set up with one Save; the user writes to the bot, approves
 * the request in the window, and the first answer arrives on Telegram. At 1280
 * and 360 px, each on a fresh data directory, with a screenshot of each step.
 *
 * The only thing written before the window opens is where the fake Bot API
 * lives (`apiRoot`): a real install talks to api.telegram.org.
 */

let browser: Browser;
let agent: OpenAiStub;
let agentServer: string;

/** The stub on the first usual model-server port that is free on this machine. */
async function stubOnAUsualPort(): Promise<{ stub: OpenAiStub; name: string }> {
  for (const server of USUAL_AGENT_SERVERS) {
    try {
      const stub = await startOpenAiStub((request) => `Hi! You said: ${request.messages.at(-1)?.content ?? ''}`, server.port);
      return { stub, name: server.name };
    } catch {
      // Taken here: try the next one.
    }
  }
  throw new Error(`every usual model-server port is taken here (${USUAL_AGENT_SERVERS.map((server) => server.port).join(', ')})`);
}

beforeAll(async () => {
  const found = await stubOnAUsualPort();
  agent = found.stub;
  agentServer = found.name;
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await agent?.close();
});

describe('the setup flow', () => {
  let telegram: FakeTelegram | undefined;
  let gateway: RunningGateway | undefined;
  let scratch: string | undefined;
  afterEach(async () => {
    await gateway?.stop();
    await telegram?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
    gateway = undefined;
    telegram = undefined;
  });

  for (const width of [1280, 360]) {
    it(`takes a new user from a fresh install to the first answer on Telegram at ${width} px`, async () => {
      telegram = new FakeTelegram();
      await telegram.start();
      const ann: FakeUser = telegram.addUser({ id: 7100000001, first_name: 'Ann' });
      scratch = mkdtempSync(join(tmpdir(), 'homing-setup-'));
      const dataDir = join(scratch, 'data');
      mkdirSync(dataDir, { mode: 0o700 });
      writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ platforms: { telegram: { apiRoot: telegram.apiRoot, pollTimeoutSeconds: 2 } } }));
      gateway = await startHeadlessGateway(['--data-dir', dataDir]);
      const { page, errors } = await openWindow(browser, gateway.url, { width });
      page.setDefaultTimeout(20_000);

      // 1. The agent: the stub is found on its port, with its model; a test message is answered.
      const setup = page.getByRole('region', { name: 'Set up Homing' });
      await setup.waitFor();
      const step1 = page.getByTestId('setup-agent');
      const choice = step1.getByRole('radio', { name: `${agentServer}: ${STUB_MODEL}` });
      await choice.waitFor();
      await choice.check();
      await step1.getByRole('button', { name: 'Try it' }).click();
      await expect.poll(() => step1.getByTestId('setup-answer').textContent(), { timeout: 20_000 }).toContain('Hi! You said: This is a connection test');
      await screenshot(page, `setup-1-agent-${width}`);
      await step1.getByRole('button', { name: 'Use this agent' }).click();
      await step1.getByText(/^Saved\./).waitFor();
      expect(JSON.parse(readFileSync(join(dataDir, 'config.json'), 'utf8')).agent).toEqual({ type: 'openai', baseUrl: agent.baseUrl, model: STUB_MODEL });
      await step1.getByRole('button', { name: 'Next: your first platform' }).click();

      // 2. The first platform: Telegram, the token pasted, one Save.
      const step2 = page.getByTestId('setup-platform');
      await step2.getByRole('button', { name: 'Telegram' }).click();
      await step2.getByLabel(/^Bot token/).fill(telegram.token);
      await step2.getByRole('button', { name: 'Save Telegram' }).click();
      await step2.getByText(/^Saved\. Bot token is in the secret store\./).waitFor();
      expect(readFileSync(join(dataDir, 'config.json'), 'utf8')).not.toContain(telegram.token);
      await screenshot(page, `setup-2-platform-${width}`);
      await step2.getByRole('button', { name: 'Next: pair yourself' }).click();

      // 3. Pair yourself: write to the bot, approve the request, the first answer arrives.
      const step3 = page.getByTestId('setup-pair');
      await step3.getByText(/Send any message to your bot on Telegram now/).waitFor();
      await waitUntil('the gateway polling Telegram', () => telegram!.requests.some((request) => request.method === 'getUpdates'), 20_000);
      telegram.userSays({ from: ann, text: 'hello?' });
      const request = step3.getByTestId('pairing-request').filter({ hasText: 'Ann' });
      await request.waitFor();
      await screenshot(page, `setup-3-request-${width}`);
      await request.getByRole('button', { name: 'Approve' }).click();
      await step3.getByText(/You are paired/).waitFor();
      telegram.userSays({ from: ann, text: 'what can you do?' });
      await step3.getByTestId('setup-answered').waitFor({ timeout: 30_000 });
      expect(telegram.sentTo(ann.id).some((message) => message.text.includes('Hi! You said: what can you do?'))).toBe(true);
      await screenshot(page, `setup-4-answered-${width}`);
      await step3.getByRole('button', { name: 'Finish' }).click();
      await page.getByRole('button', { name: 'Go to the chat' }).click();
      await expect.poll(() => setup.count()).toBe(0);
      expect(errors).toEqual([]);
    }, 120_000);
  }
});
