/// <reference lib="dom" />
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium } from './support/browser';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { openWindow, showView } from './window-fixtures/window-page';
import { addPlatform, editAgent, editPlatform } from './window-platforms/open-form';

const SLOW_AGENT = fileURLToPath(new URL('./window-fixtures/slow-stream-agent.mjs', import.meta.url));

/** Issue 13, points 3 and 5: Save never overwrites a config.json it cannot parse, and writes only what the user set;
 * Test connection for a command agent starts its program. */

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

// Every case at both widths, each width on a gateway and data directory of its own.
for (const width of [360, 1280]) describe(`settings in the window (${width} px)`, () => {
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

  it(`writes only the fields the user set, not every default (${width} px)`, async () => {
    const { page, errors } = await openWindow(browser, gateway.url, { width });
    await showView(page, 'platforms');
    await addPlatform(page, 'irc', 'IRC');
    await page.getByLabel('Server', { exact: true }).fill('irc.example.org');
    await page.getByRole('button', { name: 'Save IRC' }).click();
    await page.getByTestId('irc-form-message').getByText(/^Saved/).waitFor();
    const written = JSON.parse(readFileSync(file, 'utf8'));
    expect(written).toEqual({ platforms: { irc: { host: 'irc.example.org', nick: 'homing' } } });
    expect(errors).toEqual([]);
    await page.close();
  });

  it(`Test connection starts a command agent's program, and says so when it does not exist (${width} px)`, async () => {
    const { page, errors } = await openWindow(browser, gateway.url, { width });
    await showView(page, 'platforms');
    await editAgent(page);
    await page.getByLabel('Kind of agent').selectOption('command');
    await page.getByLabel('Program', { exact: true }).fill('/nonexistent/homing-agent');
    await page.getByRole('form', { name: 'Agent' }).getByRole('button', { name: 'Test connection' }).click();
    const message = page.getByTestId('agent-form-message');
    await message.getByText(/^\/nonexistent\/homing-agent did not work/).waitFor();
    expect(await message.getAttribute('role')).toBe('alert');
    await page.getByLabel('Program', { exact: true }).fill(process.execPath);
    await page.getByLabel('Arguments', { exact: true }).fill(SLOW_AGENT);
    await page.getByRole('form', { name: 'Agent' }).getByRole('button', { name: 'Test connection' }).click();
    await message.getByText(/^started .* and it answered a test message: “You said: This is a connection test from Homing/).waitFor({ timeout: 15_000 });
    expect(errors).toEqual([]);
    await page.close();
  });

  it(`does not overwrite a config.json with a hand-made error; it replaces it only when asked, keeping a backup (${width} px)`, async () => {
    const broken = '{ "platforms": { "irc": { "host": "irc.example.org", "nick": "homing" } }, "my hand edit": oops }\n';
    writeFileSync(file, broken);
    const { page, errors } = await openWindow(browser, gateway.url, { width });
    await showView(page, 'platforms');
    await page.getByTestId('config-error').waitFor({ timeout: 8_000 });
    await editPlatform(page, 'irc', 'IRC');
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
