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
import { openWindow, showView } from './window-fixtures/window-page';
import { discordWindow } from './window-platforms/discord';
import { emailWindow } from './window-platforms/email';
import { matrixWindow } from './window-platforms/matrix';
import { slackWindow } from './window-platforms/slack';
import { signalWindow } from './window-platforms/signal';
import type { WindowPlatform, WindowPlatformRow } from './window-platforms/row';
import { telegramWindow } from './window-platforms/telegram';
import { xmppWindow } from './window-platforms/xmpp';

/**
 * The window in Debian's Chromium against a real `homing gateway`, one row per
 * platform (test/window-platforms/<platform>.ts): its card and form in
 * Platforms on the platform's service. IRC's window test is about Deliveries
 * while the server is away, and stays in window.irc.e2e.test.ts.
 */

const REPLY_AGENT = fileURLToPath(new URL('./fixtures/reply-agent.mjs', import.meta.url));

const ROWS: readonly WindowPlatformRow[] = [discordWindow, slackWindow, signalWindow, telegramWindow, matrixWindow, xmppWindow, emailWindow];

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

describe.each(ROWS.map((row) => [row.title, row] as const))('the window with %s', (_title, row) => {
  let platform: WindowPlatform | undefined;
  let gateway: RunningGateway | undefined;
  let api: ApiSocket | undefined;
  let dataDir: string | undefined;

  beforeAll(async () => {
    platform = await row.start();
  });

  afterAll(async () => {
    await platform?.dispose();
  });

  afterEach(async () => {
    api?.close();
    await gateway?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    api = gateway = dataDir = undefined;
  });

  it(
    row.promise,
    async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'homing-window-platform-'));
      writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ agent: { type: 'command', command: process.execPath, args: [REPLY_AGENT] }, ...platform!.config }));
      gateway = await startHeadlessGateway(['--data-dir', dataDir]);
      api = await connectApi(gateway);
      const { page, errors } = await openWindow(browser, gateway.url);
      await showView(page, 'platforms');
      await platform!.exercise({ page, api, dataDir });
      expect(errors).toEqual([]);
      await page.close();
    },
    row.timeoutMs,
  );
});
