/// <reference lib="dom" />
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { GatewayOverview, PairingOverview } from '../src/shared/api';
import { connectApi, type ApiSocket } from './support/api-socket';
import { launchChromium } from './support/browser';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { connectCrowdNick, type CrowdNick } from './support/irc-crowd';
import { connectIrcUser, type IrcUser } from './support/irc-user';
import { startNgircd, type RunningNgircd } from './support/ngircd';
import { waitUntil } from './support/wait';
import { openWindow, showView } from './window-fixtures/window-page';

/**
 * Issue 34, "pairing a flood cannot silence": a real `homing gateway` process
 * with IRC pairing on and the adapter's real budget (ten courtesy lines a
 * minute, no test tuning), on a real ngircd. A hundred throwaway nicks ask for
 * a code, then one real person does. The budget tells ten strangers at once;
 * the person must get a code in its next window (a minute on), not after the
 * other ninety; nothing of anyone reaches the agent before approval; and the
 * window shows the flood as counts, not a hundred cards.
 */

const REPLY_AGENT = fileURLToPath(new URL('./fixtures/reply-agent.mjs', import.meta.url));
const BOT = 'homing';
const STRANGERS = 100;
/** DEFAULT_COURTESY in src/main/gateway/platforms/irc/courtesy-budget.ts. */
const BUDGET = { overall: 10, windowMs: 60_000 };

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

describe('a pairing flood on IRC (real gateway process, real ngircd, the real budget)', () => {
  let server: RunningNgircd;
  let gateway: RunningGateway;
  let api: ApiSocket;
  let dataDir: string;
  const crowd: CrowdNick[] = [];
  let carol: IrcUser | undefined;

  beforeAll(async () => {
    server = await startNgircd();
    dataDir = mkdtempSync(join(tmpdir(), 'homing-pairing-flood-'));
    writeFileSync(
      join(dataDir, 'config.json'),
      JSON.stringify({
        agent: { type: 'command', command: process.execPath, args: [REPLY_AGENT, '--started', join(dataDir, 'started')] },
        platforms: { irc: { host: server.host, port: server.port, tls: false, nick: BOT, channels: [], allow: [], pairing: true } },
      }),
    );
    gateway = await startHeadlessGateway(['--data-dir', dataDir]);
    api = await connectApi(gateway);
    await waitUntil(
      'IRC to connect',
      async () => (await api.call<GatewayOverview>('getOverview')).platforms.find((platform) => platform.name === 'irc')?.state === 'connected',
      15_000,
    );
  });

  afterAll(async () => {
    api?.close();
    await gateway?.stop();
    for (const nick of crowd.splice(0)) nick.close();
    await carol?.quit();
    await server?.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const started = () => (existsSync(join(dataDir, 'started')) ? readFileSync(join(dataDir, 'started'), 'utf8').trim().split('\n') : []);

  it('tells the person who writes after a hundred strangers in the budget\'s next window, lets nobody through unapproved, and shows the flood', async () => {
    for (let batch = 0; batch < STRANGERS; batch += 20) {
      crowd.push(...(await Promise.all(Array.from({ length: 20 }, (_, index) => connectCrowdNick(server, `flood${batch + index}`)))));
    }
    carol = await connectIrcUser(server, 'carol');
    for (const nick of crowd) nick.say(BOT, 'let me in');

    // All hundred are kept (none pushed out); the budget told ten of them and holds the rest as owed.
    const pairing = () => api.call<PairingOverview>('listPairing');
    await waitUntil('a hundred requests, ten told', async () => {
      const requests = (await pairing()).requests;
      return requests.length === STRANGERS && requests.filter((request) => request.told).length === BUDGET.overall;
    }, 20_000);
    await waitUntil('ten codes at the strangers', () => crowd.filter((nick) => nick.notices.length > 0).length === BUDGET.overall);

    const asked = Date.now();
    carol.client.say(BOT, 'hi, it is Carol, may I talk to your assistant?');
    await waitUntil('carol\'s request', async () => (await pairing()).requests.some((request) => request.name === 'carol'));
    const carolRequest = (await pairing()).requests.find((request) => request.name === 'carol')!;
    expect(carolRequest.told).toBe(false); // the budget is spent: owed, not marked told

    // The window while she waits: the flood as counts, no card per stranger, no raw ids.
    const { page, errors } = await openWindow(browser, gateway.url);
    await showView(page, 'platforms');
    const card = page.getByTestId('irc-requests');
    await card.getByTestId('pairing-flood').getByText(`A flood? ${STRANGERS + 1} new senders asked on IRC in the last hour`, { exact: false }).waitFor({ timeout: 15_000 });
    expect(await card.getByTestId('pairing-request').count()).toBe(0);

    // Her code comes in the budget's next window, ahead of the ninety strangers still owed theirs.
    await waitUntil('carol\'s code', () => carol!.notices.length > 0, BUDGET.windowMs + 20_000);
    expect(Date.now() - asked).toBeLessThan(BUDGET.windowMs + 20_000);
    expect(carol.notices[0]!.message).toContain(carolRequest.code);
    const toldThen = crowd.filter((nick) => nick.notices.length > 0).length;
    expect(toldThen).toBeLessThanOrEqual(2 * BUDGET.overall);
    expect((await pairing()).requests.find((request) => request.name === 'carol')!.told).toBe(true);

    // Nothing of anyone's reached the agent.
    await carol.roundTrip();
    expect(started()).toEqual([]);

    // She reads her code out; the owner types it into the window.
    await page.getByLabel('Pairing code to approve on IRC').fill(carolRequest.code);
    await card.getByRole('button', { name: 'Approve code' }).click();
    await card.getByTestId('pairing-approved').getByText(/carol/).waitFor();
    await waitUntil('the approval notice', () => carol!.notices.length === 2);
    carol.client.say(BOT, 'thanks!');
    await waitUntil('carol\'s message at the agent', () => started().length === 1, 15_000);
    expect(started()).toEqual([expect.stringMatching(/ thanks!$/)]);
    for (const nick of crowd.slice(0, 5)) nick.say(BOT, 'and me?');
    await carol.roundTrip();
    expect(started()).toHaveLength(1);

    // The flood is over: the owner forgets its requests; Carol stays approved.
    await card.getByRole('button', { name: "Forget the last hour's requests" }).click();
    await card.getByTestId('pairing-flood').waitFor({ state: 'detached' });
    const after = await pairing();
    expect(after.requests.filter((request) => request.platform === 'irc')).toEqual([]);
    expect(after.approved.map((entry) => entry.name)).toEqual(['carol']);
    expect(errors).toEqual([]);
  }, 180_000);
});
