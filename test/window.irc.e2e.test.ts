/// <reference lib="dom" />
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { DeliveryRow, GatewayEvent, GatewayOverview } from '../src/shared/api';
import { connectApi, type ApiSocket } from './support/api-socket';
import { launchChromium } from './support/browser';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { connectIrcUser, linesFrom, type IrcUser } from './support/irc-user';
import { startNgircd, type RunningNgircd } from './support/ngircd';
import { waitUntil } from './support/wait';
import { count, openWindow, showView } from './window-fixtures/window-page';

/**
 * The window in Debian's Chromium against a real `homing gateway` process whose
 * IRC adapter talks to a real ngircd, with a real IRC client as the user. The
 * gateway runs with the adapter's real defaults (the CLI has no test tuning), so
 * every step below waits for an event or a DOM state, never for a time.
 */

const REPLY_AGENT = fileURLToPath(new URL('./fixtures/reply-agent.mjs', import.meta.url));
const BOT = 'homing';
const USER = 'alice';

type EventOf<T extends GatewayEvent['type']> = Extract<GatewayEvent, { type: T }>;

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

describe('the window while IRC goes down and comes back (real ngircd, a real user client)', () => {
  let server: RunningNgircd | undefined;
  let gateway: RunningGateway | undefined;
  let api: ApiSocket | undefined;
  let dataDir: string | undefined;
  const users: IrcUser[] = [];

  afterEach(async () => {
    api?.close();
    await gateway?.stop();
    for (const user of users.splice(0)) await user.quit();
    await server?.dispose();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    api = gateway = server = dataDir = undefined;
  });

  async function user(nick: string): Promise<IrcUser> {
    const connected = await connectIrcUser(server!, nick);
    users.push(connected);
    return connected;
  }

  /** The first event of `type` matching `match` among those received from index `from` on (already seen or future). */
  async function event<T extends GatewayEvent['type']>(
    type: T,
    match: (event: EventOf<T>) => boolean = () => true,
    from = 0,
    timeoutMs = 15_000,
  ): Promise<EventOf<T>> {
    const find = () => api!.events.slice(from).find((seen): seen is EventOf<T> => seen.type === type && match(seen as EventOf<T>));
    await waitUntil(`a ${type} event`, () => find() !== undefined, timeoutMs);
    return find()!;
  }

  const ircState = (state: string) => (seen: EventOf<'platform.state'>) => seen.platform.name === 'irc' && seen.platform.state === state;

  it('keeps a reply owed while the IRC server is down, says why, and after the server is back one Retry delivers it once', async () => {
    server = await startNgircd();
    dataDir = mkdtempSync(join(tmpdir(), 'homing-window-irc-'));
    const started = join(dataDir, 'started');
    const go = join(dataDir, 'go');
    writeFileSync(
      join(dataDir, 'config.json'),
      JSON.stringify({
        // The agent holds its answer until `go` exists: the server is stopped while it answers.
        agent: { type: 'command', command: process.execPath, args: [REPLY_AGENT, '--started', started, '--wait-for', go] },
        platforms: { irc: { host: server.host, port: server.port, tls: false, nick: BOT, channels: [], allow: [USER] } },
      }),
    );
    gateway = await startHeadlessGateway(['--data-dir', dataDir]);
    api = await connectApi(gateway);
    await api.call('subscribe');
    const overview = await api.call<GatewayOverview>('getOverview');
    if (overview.platforms.find((platform) => platform.name === 'irc')?.state !== 'connected') await event('platform.state', ircState('connected'));

    const { page, errors } = await openWindow(browser, gateway.url);
    await showView(page, 'deliveries');
    await page.getByTestId('deliveries-empty').getByText('Nothing is owed.').waitFor();

    // alice asks; the server goes away while the agent is answering.
    const alice = await user(USER);
    alice.client.say(BOT, 'are you still there?');
    await waitUntil('the agent to start its turn', () => existsSync(started), 10_000);
    const beforeStop = api.events.length;
    await server.stop();
    await event('platform.state', ircState('disconnected'), beforeStop);
    writeFileSync(go, '');
    const { obligationId } = await event('reply.recorded');

    // Owed, under Deliveries, with the platform's error in plain words; counted everywhere.
    const row = page.locator(`[data-testid="delivery-row"][data-id="${obligationId}"]`);
    await row.waitFor();
    expect(await row.getAttribute('data-state')).toBe('pending');
    const why = row.getByTestId('delivery-why');
    // The adapter keeps trying: once one attempt was refused, the row says so (between attempts it says "connecting…").
    await why
      .getByText(new RegExp(`^Waiting: IRC: not connected — nothing answers at 127\\.0\\.0\\.1:${server.port} \\(is the server running\\?\\)\\. It goes out once IRC is back\\.$`))
      .waitFor({ timeout: 15_000 });
    await expect.poll(() => count(page, 'owed')).toBe(1);
    expect(await page.getByTestId('nav-owed').textContent()).toBe('1');
    await expect.poll(() => page.getByTestId('summary').textContent()).toMatch(/^1 reply owed · IRC not connected$/);

    // The server comes back. The bot reconnects by itself and sends at once, but alice's
    // client went down with the server: IRC answers 401, and the reply waits a minute
    // (long after this test is over) for her. This is the reply Retry is for.
    const beforeStart = api.events.length;
    await server.start();
    await event('platform.state', ircState('connected'), beforeStart);
    await event('delivery.changed', (seen) => seen.delivery.id === obligationId && seen.delivery.state === 'failed', beforeStart);
    await why.getByText(/^Retrying: IRC did not take it: alice is not online, so IRC cannot deliver it\. Homing tries again by itself\.$/).waitFor();
    expect(await row.getAttribute('data-state')).toBe('failed');
    await row.getByText(/^next try \d.* \(in /).waitFor();
    expect(await count(page, 'owed')).toBe(1);
    await expect.poll(() => page.getByTestId('summary').textContent()).toBe('1 reply owed');

    // alice is back: one click.
    const aliceAgain = await user(USER);
    const beforeRetry = api.events.length;
    await row.getByRole('button', { name: `Retry: reply to ${USER}` }).click();
    await event('delivery.changed', (seen) => seen.delivery.id === obligationId && seen.delivery.state === 'delivered', beforeRetry);

    // The row leaves Owed, the counts drop, and it shows as delivered.
    await expect.poll(() => count(page, 'owed')).toBe(0);
    await page.getByTestId('deliveries-empty').getByText('Nothing is owed.').waitFor();
    expect(await page.getByTestId('nav-owed').count()).toBe(0);
    await expect.poll(() => page.getByTestId('summary').textContent()).toBe('nothing owed');
    expect(await count(page, 'delivered')).toBe(1);
    await page.getByRole('tab', { name: 'Delivered' }).click();
    await row.getByText('delivered', { exact: true }).waitFor();
    await row.getByTestId('delivery-why').getByText(`Delivered to ${USER} on IRC.`, { exact: false }).waitFor();

    // alice received the reply exactly once, without a "may be a repeat" marker; her
    // first client (gone with the server) received nothing.
    await aliceAgain.roundTrip();
    expect(linesFrom(aliceAgain, BOT)).toEqual(['You said: are you still there?']);
    expect(linesFrom(alice, BOT)).toEqual([]);
    const [stored] = await api.call<DeliveryRow[]>('getDeliveries', { ids: [obligationId] });
    expect(stored).toMatchObject({ state: 'delivered', chunksDelivered: 1, chunksTotal: 1 });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
