/// <reference lib="dom" />
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { connectApi, type ApiSocket } from './support/api-socket';
import { launchChromium } from './support/browser';
import { FakeDiscord } from './support/fake-discord';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { waitUntil } from './support/wait';
import { openWindow, showView } from './window-fixtures/window-page';

/**
 * The window in Debian's Chromium against a real `homing gateway` whose
 * Discord adapter talks to the fake Discord: the Discord card and form (token
 * to the secret store, Test connection naming the bot with its invite link and
 * the intent to switch on), and a DM pairing request approved from
 * Platforms → Discord → requests.
 */

const REPLY_AGENT = fileURLToPath(new URL('./fixtures/reply-agent.mjs', import.meta.url));

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

describe('the window with Discord (the fake Discord)', () => {
  let fake: FakeDiscord;
  let gateway: RunningGateway | undefined;
  let api: ApiSocket | undefined;
  let dataDir: string | undefined;

  afterEach(async () => {
    api?.close();
    await gateway?.stop();
    await fake?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    api = gateway = dataDir = undefined;
  });

  it('stores the token, tests it (GET /users/@me names the bot, with the invite link), and approves a pairing request', async () => {
    fake = new FakeDiscord();
    await fake.start();
    const carol = fake.addUser('carol');
    dataDir = mkdtempSync(join(tmpdir(), 'homing-window-dc-'));
    writeFileSync(
      join(dataDir, 'config.json'),
      JSON.stringify({ agent: { type: 'command', command: process.execPath, args: [REPLY_AGENT] }, platforms: { discord: { apiUrl: fake.apiUrl } } }),
    );
    gateway = await startHeadlessGateway(['--data-dir', dataDir]);
    api = await connectApi(gateway);
    const { page, errors } = await openWindow(browser, gateway.url);
    await showView(page, 'platforms');

    const card = page.getByTestId('platform-discord');
    await card.getByText(/bot token is not set/).waitFor();
    const form = page.locator('form[aria-labelledby="discord-form-title"]');
    await form.getByLabel(/^Discord bot token/).fill(fake.token);
    await form.getByRole('button', { name: 'Store' }).click();
    await form.getByText('Stored in the secret store.').waitFor();
    expect(JSON.stringify(await api.call('getConfig'))).not.toContain(fake.token);
    await page.getByRole('button', { name: 'Save Discord' }).click();
    await card.getByTestId('platform-state').getByText('connected', { exact: true }).waitFor({ timeout: 20_000 });
    await form.getByRole('button', { name: 'Test connection' }).click();
    const message = page.getByTestId('discord-form-message');
    await message.getByText(/^connected to Discord as Homing Test/).waitFor();
    expect(await message.textContent()).toContain(`https://discord.com/oauth2/authorize?client_id=${fake.bot.id}&scope=bot&permissions=`);
    expect(await message.textContent()).toContain('Message Content Intent');

    const dm = fake.dmChannel(carol);
    fake.userSays({ from: carol, channelId: dm.id, content: 'hello' });
    const requests = page.getByTestId('discord-requests').getByTestId('pairing-request');
    await waitUntil('the request in the window', async () => (await requests.count()) === 1, 20_000);
    expect(await page.getByTestId('discord-requests').textContent()).not.toContain(carol.id);
    await requests.getByRole('button', { name: 'Approve' }).click();
    await waitUntil('no requests left', async () => (await requests.count()) === 0, 10_000);
    fake.userSays({ from: carol, channelId: dm.id, content: 'am I in?' });
    await waitUntil('the answer', () => fake.messages(dm.id).some((m) => m.author.id === fake.bot.id && m.content === 'You said: am I in?'), 20_000);
    expect(errors).toEqual([]);
    await page.close();
  }, 90_000);
});
