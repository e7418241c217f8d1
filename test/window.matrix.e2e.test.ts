/// <reference lib="dom" />
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { connectApi, type ApiSocket } from './support/api-socket';
import { launchChromium } from './support/browser';
import { FakeMatrix } from './support/fake-matrix';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { waitUntil } from './support/wait';
import { openWindow, showView } from './window-fixtures/window-page';

/**
 * The window in Debian's Chromium against a real `homing gateway` whose Matrix
 * adapter syncs with the fake homeserver: the Matrix form (homeserver, user,
 * token to the secret store, Test connection = whoami) and the card listing the
 * bot's rooms by name, an encrypted one marked as not supported yet, and a
 * stranger's pairing request approved under Matrix → requests.
 */

const REPLY_AGENT = fileURLToPath(new URL('./fixtures/reply-agent.mjs', import.meta.url));

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

describe('the window with Matrix (the fake homeserver)', () => {
  let fake: FakeMatrix;
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

  it('saves the account, stores the token, tests it (whoami), and lists the rooms with names and encryption', async () => {
    fake = new FakeMatrix();
    await fake.start();
    const bot = fake.addUser('homing', { displayName: 'Homing' });
    const alice = fake.addUser('alice', { displayName: 'Alice' });
    const token = fake.issueToken(bot, 'WINDOWDEV');
    fake.createRoom(alice, { name: 'Family', invite: [bot] });
    fake.createRoom(alice, { name: 'Secret plans', invite: [bot], encrypted: true });
    dataDir = mkdtempSync(join(tmpdir(), 'homing-window-mx-'));
    writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ agent: { type: 'command', command: process.execPath, args: [REPLY_AGENT] } }));
    gateway = await startHeadlessGateway(['--data-dir', dataDir]);
    api = await connectApi(gateway);
    const { page, errors } = await openWindow(browser, gateway.url);
    await showView(page, 'platforms');

    const form = page.locator('form[aria-labelledby="matrix-form-title"]');
    await form.getByLabel('Homeserver URL').fill(fake.baseUrl);
    await form.getByLabel('Bot user').fill(bot);
    await form.getByLabel('Always allowed (Matrix user ids)').fill(alice);
    await form.getByLabel(/^Access token/).fill(token);
    await form.getByRole('button', { name: 'Store' }).first().click();
    await form.getByText('Stored in the secret store.').first().waitFor();
    expect(JSON.stringify(await api.call('getConfig'))).not.toContain(token);
    await page.getByRole('button', { name: 'Save Matrix' }).click();

    const card = page.getByTestId('platform-matrix');
    await card.getByTestId('platform-state').getByText('connected', { exact: true }).waitFor({ timeout: 15_000 });
    await form.getByRole('button', { name: 'Test connection' }).click();
    await page.getByTestId('matrix-form-message').getByText(`connected to ${fake.baseUrl} as ${bot} (device WINDOWDEV)`).waitFor();

    // Invited by an allowed user: the bot joins both rooms, and the card names them.
    const rooms = card.getByTestId('platform-rooms');
    await rooms.getByText('Family').waitFor({ timeout: 15_000 });
    await rooms.getByText('Secret plans').waitFor({ timeout: 15_000 });
    const secret = rooms.locator('li', { hasText: 'Secret plans' });
    await secret.getByText('encrypted — not supported yet').waitFor();
    expect(await rooms.locator('li', { hasText: 'Family' }).textContent()).not.toContain('encrypted');
    await waitUntil('the encrypted room told', () => fake.posted.some((message) => message.sender === bot), 10_000);

    // A stranger's direct chat: a pairing code, a request under Matrix → requests, approved there.
    const bob = fake.addUser('bob', { displayName: 'Bob' });
    const dm = fake.createRoom(bob, { invite: [bot], direct: true });
    await waitUntil('the bot in the direct chat', () => fake.membership(bot, dm) === 'join', 15_000);
    fake.userSays(bob, dm, 'hello?');
    const requests = page.getByTestId('matrix-requests').getByTestId('pairing-request');
    await requests.filter({ hasText: 'Bob' }).getByRole('button', { name: 'Approve' }).click({ timeout: 15_000 });
    await page.getByTestId('matrix-requests').getByTestId('pairing-approved').getByText(/Bob/).waitFor();
    expect(await page.getByTestId('telegram-requests').getByTestId('pairing-request').count()).toBe(0);
    fake.userSays(bob, dm, 'now?');
    await waitUntil('Bob answered', () => fake.postedBy(bot, dm).some((message) => message.body === 'You said: now?'), 15_000);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
