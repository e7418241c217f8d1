import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { Browser } from 'playwright-core';
import { launchChromium } from './support/browser';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';

function httpGet(port: number, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; body: string; headers: Record<string, unknown> }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Opens a WebSocket and reports whether the server accepted it (and the HTTP status if not). */
function tryWebSocket(url: string, options: WebSocket.ClientOptions = {}) {
  return new Promise<{ accepted: true; socket: WebSocket } | { accepted: false; status: number }>((resolve) => {
    const socket = new WebSocket(url, options);
    socket.once('open', () => resolve({ accepted: true, socket }));
    socket.once('unexpected-response', (_req, res) => resolve({ accepted: false, status: res.statusCode ?? 0 }));
    socket.once('error', () => resolve({ accepted: false, status: 0 }));
  });
}

describe('the headless gateway (a real `homing gateway` process)', () => {
  let dataDir: string;
  let gateway: RunningGateway;
  let browser: Browser | undefined;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-headless-'));
    gateway = await startHeadlessGateway(['--data-dir', dataDir]);
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints a loopback URL that carries the access token', () => {
    expect(gateway.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}$/);
    expect(gateway.output()).toContain(`data in ${dataDir}`);
  });

  it('serves the window with the token, and sets a strict CSP', async () => {
    const response = await httpGet(gateway.port, `/?token=${gateway.token}`);
    expect(response.status).toBe(200);
    expect(response.body).toContain('<div id="root">');
    expect(String(response.headers['content-security-policy'])).toContain("script-src 'self'");
    expect(response.headers['referrer-policy']).toBe('no-referrer');
  });

  it('refuses a request without the token, or with a wrong one', async () => {
    expect((await httpGet(gateway.port, '/')).status).toBe(401);
    expect((await httpGet(gateway.port, '/?token=wrong')).status).toBe(401);
    const asset = await httpGet(gateway.port, '/assets/anything.js');
    expect(asset.status).toBe(401);
  });

  it('refuses a foreign Host even with the right token (DNS rebinding)', async () => {
    const response = await httpGet(gateway.port, `/?token=${gateway.token}`, { Host: 'example.com' });
    expect(response.status).toBe(403);
    const withPort = await httpGet(gateway.port, `/?token=${gateway.token}`, { Host: `example.com:${gateway.port}` });
    expect(withPort.status).toBe(403);
  });

  it('keeps paths inside the window folder', async () => {
    const response = await httpGet(gateway.port, `/..%2f..%2fpackage.json?token=${gateway.token}`);
    expect(response.status).toBe(404);
  });

  it('refuses WebSocket upgrades with a foreign Origin, a foreign Host or no token', async () => {
    const api = `ws://127.0.0.1:${gateway.port}/api`;
    expect(await tryWebSocket(`${api}?token=${gateway.token}`, { origin: 'http://evil.example' })).toEqual({
      accepted: false,
      status: 403,
    });
    expect(
      await tryWebSocket(`${api}?token=${gateway.token}`, { headers: { Host: 'attacker.test' } }),
    ).toEqual({ accepted: false, status: 403 });
    expect(await tryWebSocket(api, { origin: `http://127.0.0.1:${gateway.port}` })).toEqual({
      accepted: false,
      status: 401,
    });
  });

  it('answers the API over the WebSocket with the token and its own Origin', async () => {
    const result = await tryWebSocket(`ws://127.0.0.1:${gateway.port}/api?token=${gateway.token}`, {
      origin: `http://127.0.0.1:${gateway.port}`,
    });
    if (!result.accepted) throw new Error(`refused with ${result.status}`);
    const reply = new Promise<unknown>((resolve) => result.socket.once('message', (data) => resolve(JSON.parse(String(data)))));
    result.socket.send(JSON.stringify({ id: 7, method: 'getStatus' }));
    expect(await reply).toMatchObject({ id: 7, ok: true, value: { state: 'running', dataDir, mode: 'headless' } });
    result.socket.close();
  });

  it('shows the status from the core in Chromium', async () => {
    browser = await launchChromium();
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(gateway.url);
    await page.locator('nav button[data-view="status"]').click();
    await page.getByTestId('gateway-state').getByText('running').waitFor({ timeout: 10_000 });
    // The state may come from the overview first; the status call fills the rest.
    await expect.poll(() => page.getByTestId('gateway-data-dir').textContent(), { timeout: 5_000 }).toBe(dataDir);
    expect(await page.getByTestId('gateway-version').textContent()).toMatch(/^\d+\.\d+\.\d+/);
    expect(errors).toEqual([]);
  });

  it('answers a local message through the built-in agent in the window, and shows it delivered', async () => {
    browser ??= await launchChromium();
    const page = await browser.newPage();
    await page.goto(gateway.url);
    await page.getByLabel('Message to your agent').fill('hello from the browser');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByTestId('chat-user').getByText('hello from the browser').waitFor({ timeout: 10_000 });
    const reply = page.getByTestId('chat-assistant').last();
    await reply.getByText(/built-in agent/i).waitFor({ timeout: 10_000 });
    await reply.getByTestId('delivery-tick').and(page.locator('[data-state="delivered"]')).waitFor({ timeout: 10_000 });
    expect(await page.getByLabel('Message to your agent').inputValue()).toBe('');
  });

  it('takes the token out of the address bar once the page has it, and keeps working after a reload', async () => {
    browser ??= await launchChromium();
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(gateway.url);
    await page.locator('nav button[data-view="status"]').click();
    await page.getByTestId('gateway-state').getByText('running').waitFor({ timeout: 10_000 });
    expect(page.url()).toBe(`http://127.0.0.1:${gateway.port}/`);
    // The asset cookie is HttpOnly, and holds no token anyway.
    expect(await page.evaluate(() => document.cookie)).toBe('');
    await page.reload();
    await page.locator('nav button[data-view="status"]').click();
    await page.getByTestId('gateway-state').getByText('running').waitFor({ timeout: 10_000 });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('says how to get in when the window is opened without its token', async () => {
    browser ??= await launchChromium();
    const context = await browser.newContext();
    const page = await context.newPage();
    const response = await page.goto(`http://127.0.0.1:${gateway.port}/`);
    expect(response?.status()).toBe(401);
    expect(await page.textContent('body')).toContain('open the URL that `homing url` prints');
    // With the asset cookie (another tab of the same browser) the page loads, and says the same.
    await page.goto(gateway.url);
    const other = await context.newPage();
    await other.goto(`http://127.0.0.1:${gateway.port}/`);
    await other.getByText(/no access token: open the URL that npx homing url prints/).first().waitFor({ timeout: 10_000 });
    await context.close();
  });
});
