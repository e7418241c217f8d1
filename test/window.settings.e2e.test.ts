/// <reference lib="dom" />
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium } from './support/browser';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { openWindow, showView } from './window-fixtures/window-page';

/** Issue 13, point 3: Save never overwrites a config.json it cannot parse, and writes only what the user set. */

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

describe('settings in the window', () => {
  let dataDir: string;
  let gateway: RunningGateway;
  let file: string;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-window-settings-'));
    file = join(dataDir, 'config.json');
    gateway = await startHeadlessGateway(['--data-dir', dataDir]);
  });
  afterAll(async () => {
    await gateway?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('writes only the fields the user set, not every default (1280 px)', async () => {
    const { page, errors } = await openWindow(browser, gateway.url, { width: 1280 });
    await showView(page, 'platforms');
    await page.getByLabel('Server', { exact: true }).fill('irc.example.org');
    await page.getByRole('button', { name: 'Save IRC' }).click();
    await page.getByTestId('irc-form-message').getByText(/^Saved/).waitFor();
    const written = JSON.parse(readFileSync(file, 'utf8'));
    expect(written).toEqual({ platforms: { irc: { host: 'irc.example.org', nick: 'homing' } } });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('does not overwrite a config.json with a hand-made error; it replaces it only when asked, keeping a backup (360 px)', async () => {
    const broken = '{ "platforms": { "irc": { "host": "irc.example.org", "nick": "homing" } }, "my hand edit": oops }\n';
    writeFileSync(file, broken);
    const { page, errors } = await openWindow(browser, gateway.url, { width: 360 });
    await showView(page, 'platforms');
    await page.getByTestId('config-error').waitFor({ timeout: 8_000 });
    await page.getByLabel('Nick', { exact: true }).fill('homingbot');
    await page.getByRole('button', { name: 'Save IRC' }).click();
    const message = page.getByTestId('irc-form-message');
    await message.getByText(/^Not saved: .*has an error/).waitFor();
    expect(await message.textContent()).not.toMatch(/^Saved/);
    expect(readFileSync(file, 'utf8')).toBe(broken);

    await page.getByRole('button', { name: 'Replace config.json (keeps a backup)' }).click();
    const dialog = page.getByRole('dialog', { name: 'Replace config.json?' });
    await dialog.getByRole('button', { name: 'Replace', exact: true }).click();
    await message.getByText(/^Saved\. The old file is kept as .*\.bak\.$/).waitFor();
    const backups = readdirSync(dataDir).filter((name) => /^config\.json\..*\.bak$/.test(name));
    expect(backups).toHaveLength(1);
    expect(readFileSync(join(dataDir, backups[0]!), 'utf8')).toBe(broken);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ platforms: { irc: { host: 'irc.example.org', nick: 'homingbot' } } });
    await page.getByTestId('config-error').waitFor({ state: 'detached' });
    expect(existsSync(file)).toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  });
});
