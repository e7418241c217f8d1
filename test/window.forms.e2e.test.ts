/// <reference lib="dom" />
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium } from './support/browser';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { openWindow, showView } from './window-fixtures/window-page';

/** Issue 34: every platform's form is one form driven by its description; what IRC's did, each one does. */

let browser: Browser;
let dataDir: string;
let gateway: RunningGateway;
beforeAll(async () => {
  browser = await launchChromium();
  dataDir = mkdtempSync(join(tmpdir(), 'homing-window-forms-'));
  gateway = await startHeadlessGateway(['--data-dir', dataDir]);
});
afterAll(async () => {
  await gateway?.stop();
  await browser?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the platforms’ forms', () => {
  it('name a wrong field at the form and mark it, on any platform', async () => {
    const { page, errors } = await openWindow(browser, gateway.url);
    await showView(page, 'platforms');
    const form = page.locator('form[aria-labelledby="matrix-form-title"]');
    await form.getByLabel('Homeserver URL').fill('matrix.example.org');
    await form.getByLabel('Bot user').fill('@homing:example.org');
    await form.getByRole('button', { name: 'Save Matrix' }).click();
    const message = page.getByTestId('matrix-form-message');
    await message.getByText(/platforms\.matrix\.homeserver/).waitFor();
    expect(await message.getAttribute('role')).toBe('alert');
    expect(await message.textContent()).toMatch(/^Not saved: Homeserver URL must be a URL/);
    expect(await form.getByLabel('Homeserver URL').getAttribute('aria-invalid')).toBe('true');
    expect(await form.getByLabel('Bot user').getAttribute('aria-invalid')).toBeNull();
    expect(errors).toEqual([]);
    await page.close();
  });

  it('write only what the user changed, keeping a mail server’s fields in its own object', async () => {
    const { page, errors } = await openWindow(browser, gateway.url);
    await showView(page, 'platforms');
    const form = page.locator('form[aria-labelledby="email-form-title"]');
    await form.getByLabel('Address', { exact: true }).fill('assistant@example.org');
    await form.getByLabel('IMAP server').fill('imap.example.org');
    await form.getByLabel('SMTP server').fill('smtp.example.org');
    await form.locator('fieldset', { hasText: 'Outgoing mail (SMTP)' }).getByLabel('Port').fill('2525');
    await form.getByRole('button', { name: 'Save Email' }).click();
    await page.getByTestId('email-form-message').getByText(/^Saved/).waitFor();
    const written = JSON.parse(readFileSync(join(dataDir, 'config.json'), 'utf8'));
    expect(written.platforms.email).toEqual({ address: 'assistant@example.org', imap: { host: 'imap.example.org' }, smtp: { host: 'smtp.example.org', port: 2525 } });
    expect(errors).toEqual([]);
    await page.close();
  });
});
