/// <reference lib="dom" />
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { connectApi } from './support/api-socket';
import { launchChromium } from './support/browser';
import { EmailWorld } from './support/email-world';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { openWindow, showView } from './window-fixtures/window-page';

/**
 * The window in Debian's Chromium against a real `homing gateway` reading a
 * real dovecot and sending through the SMTP sink: the Email card and form
 * (password to the secret store, Test connection logging in to IMAP and SMTP).
 */

const AGENT = { address: 'agent@test.local', password: 'agentpw' };

let browser: Browser;
let world: EmailWorld;
beforeAll(async () => {
  browser = await launchChromium();
  world = await EmailWorld.start([AGENT]);
}, 30_000);
afterAll(async () => {
  await browser?.close();
  await world?.dispose();
});

describe('the window with email (real dovecot, SMTP sink)', () => {
  let gateway: RunningGateway | undefined;

  afterEach(async () => {
    await gateway?.stop();
    gateway = undefined;
  });

  it('stores the password, connects, and tests IMAP and SMTP logins, naming a wrong password', async () => {
    const dataDir = world.dataDir(AGENT.address, { passwordEnv: undefined, allowFrom: ['alice@example.org'] });
    gateway = await startHeadlessGateway(['--data-dir', dataDir]);
    const api = await connectApi(gateway);
    const { page, errors } = await openWindow(browser, gateway.url);
    await showView(page, 'platforms');

    const card = page.getByTestId('platform-email');
    await card.getByText(/mailbox password is not set/).waitFor({ timeout: 15_000 });
    const form = page.locator('form[aria-labelledby="email-form-title"]');
    expect(await form.getByLabel('Address', { exact: true }).inputValue()).toBe(AGENT.address);

    // A wrong password first: Test connection says which login failed.
    await page.getByLabel(/^Mailbox password/).fill('not-the-password');
    await form.getByRole('button', { name: 'Store' }).click();
    await page.getByText('Stored in the secret store.').first().waitFor();
    await form.getByRole('button', { name: 'Test connection' }).click();
    await page.getByTestId('email-form-message').getByText(/refused the login/).first().waitFor({ timeout: 20_000 });

    await page.getByLabel(/^Mailbox password/).fill(AGENT.password);
    await form.getByRole('button', { name: 'Store' }).click();
    await page.getByText('Stored in the secret store.').first().waitFor();
    expect(JSON.stringify(await api.call('getConfig'))).not.toContain(AGENT.password);
    expect(readFileSync(join(dataDir, 'config.json'), 'utf8')).not.toContain(AGENT.password);
    await page.getByRole('button', { name: 'Save Email' }).click();
    await card.getByTestId('platform-state').getByText('connected', { exact: true }).waitFor({ timeout: 20_000 });
    await form.getByRole('button', { name: 'Test connection' }).click();
    const message = page.getByTestId('email-form-message');
    await message.getByText(/IMAP: logged in to 127\.0\.0\.1:\d+ as agent@test\.local/).waitFor({ timeout: 20_000 });
    expect(await message.textContent()).toMatch(/SMTP: 127\.0\.0\.1:\d+ accepted the login as agent@test\.local/);
    expect(errors).toEqual([]);
    api.close();
    await page.close();
  }, 90_000);
});
