import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DeliveryPage, GatewayOverview } from '../src/shared/api';
import { RESEND_MARKER } from '../src/main/gateway/delivery/marker';
import { connectApi, type ApiSocket } from './support/api-socket';
import { FakeMatrix } from './support/fake-matrix';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { waitUntil } from './support/wait';

/**
 * Matrix's intake edges through the real headless gateway (built by `npm run
 * build`) on the fake homeserver: a gap bigger than a sync's timeline and than
 * the old 1 000-event cap, read through a 502 on `/messages`; a thread the bot
 * answered in, remembered across a clean restart; a resend past Synapse's 24 h
 * txnId window, which the room sees twice and so must carry the marker.
 */

const REPLY_AGENT = fileURLToPath(new URL('./fixtures/reply-agent.mjs', import.meta.url));
const DAY_MS = 24 * 60 * 60 * 1000;

describe('Matrix intake through the headless gateway', () => {
  let fake: FakeMatrix;
  let bot: string;
  let alice: string;
  let bob: string;
  let token: string;
  let dataDir: string;
  const gateways: RunningGateway[] = [];
  const sockets: ApiSocket[] = [];

  beforeEach(async () => {
    fake = new FakeMatrix();
    await fake.start();
    bot = fake.addUser('homing', { displayName: 'Homing' });
    alice = fake.addUser('alice', { displayName: 'Alice' });
    bob = fake.addUser('bob', { displayName: 'Bob' });
    token = fake.issueToken(bot, 'HOMINGDEV');
    dataDir = mkdtempSync(join(tmpdir(), 'homing-mx-intake-'));
    writeFileSync(
      join(dataDir, 'config.json'),
      JSON.stringify({
        agent: { type: 'command', command: process.execPath, args: [REPLY_AGENT] },
        platforms: { matrix: { homeserver: fake.baseUrl, user: bot, accessTokenEnv: 'MATRIX_TOKEN', allowFrom: [alice], pollTimeoutSeconds: 2 } },
        delivery: { leaseSeconds: 2 },
      }),
    );
  });

  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.close();
    for (const gateway of gateways.splice(0)) await gateway.kill();
    await fake.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function start(env: NodeJS.ProcessEnv = {}): Promise<{ gateway: RunningGateway; api: ApiSocket }> {
    const gateway = await startHeadlessGateway(['--data-dir', dataDir], { MATRIX_TOKEN: token, ...env });
    gateways.push(gateway);
    const api = await connectApi(gateway);
    sockets.push(api);
    return { gateway, api };
  }

  async function stop(gateway: RunningGateway, how: 'clean' | 'kill'): Promise<void> {
    await (how === 'clean' ? gateway.stop() : gateway.kill());
    gateways.splice(gateways.indexOf(gateway), 1);
  }

  function savedState(): { since: string | null; gaps?: { roomId: string; from: string }[] } {
    const dir = join(dataDir, 'matrix');
    return JSON.parse(readFileSync(join(dir, readdirSync(dir).find((name) => name.startsWith('account-'))!), 'utf8')) as ReturnType<typeof savedState>;
  }

  /** The bot's sync position has reached the server's newest event and no gap is left to read. */
  async function caughtUp(): Promise<void> {
    await waitUntil(
      'the sync position at the end, no gap pending',
      () => fake.isPolling(bot) && savedState().since === fake.syncToken() && (savedState().gaps ?? []).length === 0,
      20_000,
    );
  }

  const bodies = (room: string) => fake.postedBy(bot, room).map((message) => message.body);

  it('reads a gap longer than 1 000 events page by page after an outage, through a 502 on /messages: every addressed message answered once', async () => {
    const room = fake.createRoom(alice, { name: 'Busy', invite: [bot], join: [bob] });
    const first = await start();
    await waitUntil('the bot in the room and polling', () => fake.membership(bot, room) === 'join' && fake.isPolling(bot), 15_000);
    await stop(first.gateway, 'clean');

    // While Homing is away: 1 200 messages, a few of them to the bot, the first ones far outside the sync's timeline.
    const addressed = new Map([[3, 'early'], [450, 'middle'], [1_050, 'late'], [1_195, 'recent']]);
    for (let i = 0; i < 1_200; i++) {
      const word = addressed.get(i);
      if (word) fake.userSays(alice, room, `Homing: ${word}`, { mentions: [bot] });
      else fake.userSays(i % 2 ? alice : bob, room, `chatter ${i}`);
    }
    fake.failNextMessages();
    const messagesBefore = fake.requests.filter((request) => request.path.endsWith('/messages')).length;

    await start();
    await waitUntil('four replies', () => bodies(room).length >= 4, 25_000);
    await caughtUp();
    expect(bodies(room)).toEqual(['You said: early', 'You said: middle', 'You said: late', 'You said: recent']);
    // The 502 was met, and the page it hid was read again.
    const pages = fake.requests.filter((request) => request.path.endsWith('/messages')).slice(messagesBefore);
    expect(pages.length).toBeGreaterThan(11);
    expect(pages[1]!.query.get('from')).toBe(pages[0]!.query.get('from'));
  });

  it('killed in the middle of a gap, between receipt and save: goes on from the last page noted, and answers each addressed message once', async () => {
    const room = fake.createRoom(alice, { name: 'Busy', invite: [bot], join: [bob] });
    const first = await start();
    await waitUntil('the bot in the room and polling', () => fake.membership(bot, room) === 'join' && fake.isPolling(bot), 15_000);
    await stop(first.gateway, 'clean');
    const addressed = new Map([[250, 'third page'], [420, 'fifth page']]);
    for (let i = 0; i < 600; i++) {
      const word = addressed.get(i);
      if (word) fake.userSays(alice, room, `Homing: ${word}`, { mentions: [bot] });
      else fake.userSays(bob, room, `chatter ${i}`);
    }
    const hold = join(dataDir, 'hold');
    writeFileSync(hold, '');
    const second = await start({ HOMING_TEST_HOLD_INTAKE: hold });
    await waitUntil('the first addressed message held before its save', () => existsSync(`${hold}.held`), 15_000);
    await stop(second.gateway, 'kill');
    rmSync(hold);
    // The two pages before it were taken and noted: the gap now starts after them.
    const noted = savedState().gaps!;
    expect(noted.map((gap) => gap.roomId)).toEqual([room]);
    const pages = fake.requests.filter((request) => request.path.endsWith('/messages'));
    expect(pages).toHaveLength(3);
    expect(noted[0]!.from).toBe(pages[2]!.query.get('from'));
    expect(noted[0]!.from).not.toBe(pages[0]!.query.get('from'));

    const third = fake.requests.length;
    await start();
    await waitUntil('two replies', () => bodies(room).length >= 2, 20_000);
    await caughtUp();
    expect(bodies(room)).toEqual(['You said: third page', 'You said: fifth page']);
    expect(fake.requests.slice(third).find((request) => request.path.endsWith('/messages'))!.query.get('from')).toBe(noted[0]!.from);
  });

  it('when the homeserver refuses the saved sync position (another server\'s token), says once on the card that messages may be lost and goes on', async () => {
    const room = fake.createRoom(alice, { invite: [bot], direct: true });
    const first = await start();
    await waitUntil('the bot in the room and polling', () => fake.membership(bot, room) === 'join' && fake.isPolling(bot), 15_000);
    await stop(first.gateway, 'clean');
    // A position from a server of another make (Conduit's tokens are plain numbers): Synapse answers 400.
    const dir = join(dataDir, 'matrix');
    const file = join(dir, readdirSync(dir).find((name) => name.startsWith('account-'))!);
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), since: '12345' }));
    const second = await start();
    const notice = async () => (await second.api.call<GatewayOverview>('getOverview')).platforms.find((platform) => platform.name === 'matrix')?.notice;
    await waitUntil('the card says so', async () => (await notice()) !== undefined, 15_000);
    expect((await notice())!.text).toContain('may not be answered');
    await waitUntil('polling from a new position', () => fake.isPolling(bot) && savedState().since !== '12345', 15_000);
    fake.userSays(alice, room, 'still there?');
    await waitUntil('answered', () => bodies(room).length === 1, 15_000);
    expect(fake.requests.filter((request) => request.path.endsWith('/sync') && request.query.get('since') === '12345')).toHaveLength(1);
    await stop(second.gateway, 'clean');
    // Said once: the refused position is gone, so the next start has nothing to say.
    const third = await start();
    await waitUntil('polling again', () => fake.isPolling(bot), 15_000);
    expect((await third.api.call<GatewayOverview>('getOverview')).platforms.find((platform) => platform.name === 'matrix')?.notice).toBeUndefined();
  });

  it('after a clean restart, answers a follow-up without a mention in a thread it answered in, and a reply to its message from a client without m.mentions', async () => {
    const room = fake.createRoom(alice, { name: 'Threads', invite: [bot], join: [bob] });
    const first = await start();
    await waitUntil('the bot in the room', () => fake.membership(bot, room) === 'join', 15_000);
    const root = fake.userSays(alice, room, 'a topic');
    fake.userSays(alice, room, 'Homing: first', { threadRoot: root.event_id, mentions: [bot] });
    await waitUntil('the answer in the thread', () => bodies(room).length === 1, 15_000);
    const answer = fake.postedBy(bot, room)[0]!;
    expect(answer.content['m.relates_to']).toMatchObject({ rel_type: 'm.thread', event_id: root.event_id });
    await stop(first.gateway, 'clean');

    await start();
    await waitUntil('polling again', () => fake.isPolling(bot), 15_000);
    // Element sends a thread message without an explicit reply with empty m.mentions: only the thread addresses the bot.
    const followUp = fake.userSays(alice, room, 'second', { threadRoot: root.event_id });
    expect(followUp.content['m.mentions']).toEqual({});
    await waitUntil('the follow-up answered', () => bodies(room).length === 2, 15_000);
    // A client that sets no m.mentions replies to the bot's answer from before the restart.
    fake.userSays(alice, room, 'third', { replyTo: answer.eventId, extra: { 'm.mentions': {} } });
    await waitUntil('the reply answered', () => bodies(room).length === 3, 15_000);
    expect(bodies(room)).toEqual(['You said: first', 'You said: second', 'You said: third']);
  });

  it.each([
    { server: 'Synapse', forgetsAfter: 'a day', agedMs: DAY_MS + 60_000 },
    // Dendrite keeps txnIds in memory 30 to 60 minutes (internal/transactions/transactions.go).
    { server: 'Dendrite', forgetsAfter: 'an hour', agedMs: 60 * 60_000 },
  ])('a part resent after $server forgot its txnId ($forgetsAfter later) shows twice, the resend with the marker', async ({ server, agedMs }) => {
    fake.serverSoftware = server;
    const room = fake.createRoom(alice, { invite: [bot], direct: true });
    const first = await start();
    await waitUntil('the bot in the room', () => fake.membership(bot, room) === 'join', 15_000);
    // The reply is posted, its answer never comes back.
    const unfault = fake.fault((request) => (request.method === 'PUT' && request.path.includes('/send/m.room.message/') ? { kind: 'hang-after' } : undefined));
    fake.userSays(alice, room, 'hello');
    await waitUntil('the reply posted', () => bodies(room).length === 1, 15_000);
    await stop(first.gateway, 'kill');
    unfault();

    // Time passes: the reply's record is that old, and the homeserver has forgotten the txnId.
    const db = new Database(join(dataDir, 'homing.db'), { fileMustExist: true });
    try {
      expect(db.prepare('UPDATE ledger_outbox SET created_at = created_at - ?').run(agedMs).changes).toBe(1);
    } finally {
      db.close();
    }
    fake.forgetTxnIds();

    const second = await start();
    await waitUntil(
      'the reply delivered',
      async () => (await second.api.call<DeliveryPage>('listDeliveries', {})).deliveries.some((row) => row.state === 'delivered'),
      20_000,
    );
    const posted = fake.postedBy(bot, room);
    expect(posted).toHaveLength(2);
    expect(posted[0]!.txnId).toBe(posted[1]!.txnId);
    expect(posted[0]!.body).toBe('You said: hello');
    expect(posted[1]!.body).toBe(`${RESEND_MARKER}\nYou said: hello`);
  });
});
