/// <reference lib="dom" />
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { connectApi, type ApiSocket } from './support/api-socket';
import { launchChromium } from './support/browser';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { startProsody, type RunningProsody } from './support/prosody';
import { waitUntil } from './support/wait';
import { XmppUser } from './support/xmpp-user';
import { openWindow, showView } from './window-fixtures/window-page';

/**
 * The window in Debian's Chromium against a real `homing gateway` whose XMPP
 * adapter logs in to a real prosody: the XMPP card and form (the password to
 * the secret store, a refused login in words, Test connection logging in and
 * out), and an answered message once connected.
 */

const REPLY_AGENT = fileURLToPath(new URL('./fixtures/reply-agent.mjs', import.meta.url));

let browser: Browser;
let prosody: RunningProsody;
beforeAll(async () => {
  browser = await launchChromium();
  prosody = await startProsody({ users: { homing: 'homing-window-pw', alice: 'alice-pw' } });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await prosody?.dispose();
});

describe('the window with XMPP (a real prosody)', () => {
  let gateway: RunningGateway | undefined;
  let api: ApiSocket | undefined;
  let dataDir: string | undefined;
  let alice: XmppUser | undefined;

  afterEach(async () => {
    api?.close();
    await gateway?.stop();
    await alice?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    api = gateway = dataDir = alice = undefined;
  });

  it('stores the password, says a wrong one was refused, connects with the right one, and tests the login', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-window-xmpp-'));
    writeFileSync(
      join(dataDir, 'config.json'),
      JSON.stringify({
        agent: { type: 'command', command: process.execPath, args: [REPLY_AGENT] },
        platforms: { xmpp: { jid: 'homing@localhost', host: '127.0.0.1', port: prosody.port, security: 'none', allowFrom: ['alice@localhost'] } },
      }),
    );
    gateway = await startHeadlessGateway(['--data-dir', dataDir]);
    api = await connectApi(gateway);
    const { page, errors } = await openWindow(browser, gateway.url);
    await showView(page, 'platforms');
    const form = page.locator('form[aria-labelledby="xmpp-form-title"]');
    const card = page.getByTestId('platform-xmpp');

    // No password yet: the card says why it is not connected.
    await card.getByText(/password for homing@localhost is not set/).waitFor();
    expect(await form.getByLabel('Account (JID)').inputValue()).toBe('homing@localhost');

    await form.getByLabel(/^Password/).fill('not-the-password');
    await form.getByRole('button', { name: 'Store' }).click();
    await form.getByText('Stored in the secret store.').waitFor();
    await form.getByRole('button', { name: 'Save XMPP' }).click();
    await card.getByText(/refused the login/).waitFor({ timeout: 20_000 });
    await form.getByRole('button', { name: 'Test connection' }).click();
    await page.getByTestId('xmpp-form-message').getByText(/refused the login for homing@localhost \(not-authorized\)/).waitFor({ timeout: 20_000 });

    await form.getByLabel(/^Password/).fill('homing-window-pw');
    await form.getByRole('button', { name: 'Store' }).click();
    await form.getByText('Stored in the secret store.').waitFor();
    expect(JSON.stringify(await api.call('getConfig'))).not.toContain('homing-window-pw');
    await card.getByTestId('platform-state').getByText('connected', { exact: true }).waitFor({ timeout: 20_000 });
    await form.getByRole('button', { name: 'Test connection' }).click();
    await page
      .getByTestId('xmpp-form-message')
      .getByText(new RegExp(`^logged in as homing@localhost on 127\\.0\\.0\\.1:${prosody.port} \\(not encrypted; stream management on\\) and out again`))
      .waitFor({ timeout: 20_000 });

    // And it answers.
    alice = new XmppUser('alice', 'alice-pw', prosody.port);
    await alice.start();
    await alice.say('homing@localhost', 'hello from the window test');
    await waitUntil('the answer', () => alice!.bodiesFrom('homing@localhost').some((message) => message.body === 'You said: hello from the window test'), 20_000);
    expect(errors).toEqual([]);
    await page.close();
  }, 90_000);
});
