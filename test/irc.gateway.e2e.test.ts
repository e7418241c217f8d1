import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiResults, MethodName } from '../src/shared/api';
import type { PlatformTuning } from '../src/main/gateway/platforms/catalog';
import { RESEND_MARKER } from '../src/main/gateway/delivery/marker';
import { IRC_LINE_BYTES, textBudget, toProtocolLines } from '../src/main/gateway/platforms/irc/lines';
import { longText } from './fixtures/long-text.mjs';
import { startGatewayHarness, type GatewayHarness } from './support/gateway-harness';
import { connectIrcUser, linesFrom, type IrcUser } from './support/irc-user';
import { FAST_IRC, startNgircd, type RunningNgircd } from './support/ngircd';
import { waitUntil } from './support/wait';

/**
 * The whole gateway in this process — pipeline, agent, ledger, sweeps — with its
 * IRC adapter on a real ngircd, and a second real IRC client as the user. Pacing
 * and backoff are shrunk through `tuning`, so each test takes a second or two.
 */

const REPLY_AGENT = fileURLToPath(new URL('./fixtures/reply-agent.mjs', import.meta.url));
const BOT = 'homing';
const CHANNEL = '#homing';


interface TranscriptMessage {
  readonly role: 'user' | 'assistant';
  readonly text: string;
  readonly obligationId?: string;
}

describe('the gateway on IRC (real ngircd, a real user client)', () => {
  let server: RunningNgircd;
  let harness: GatewayHarness | undefined;
  let scratch: string;
  const users: IrcUser[] = [];

  beforeEach(async () => {
    server = await startNgircd();
    scratch = mkdtempSync(join(tmpdir(), 'homing-irc-e2e-'));
  });

  afterEach(async () => {
    await harness?.close();
    harness = undefined;
    for (const user of users.splice(0)) await user.quit();
    await server.dispose();
    rmSync(scratch, { recursive: true, force: true });
  });

  async function user(nick: string, channels: string[] = []): Promise<IrcUser> {
    const connected = await connectIrcUser(server, nick, channels);
    users.push(connected);
    return connected;
  }

  /** Starts the gateway with IRC on the test server and waits until the bot sits in the channel. */
  async function startGateway(agent: unknown = { type: 'builtin' }, tuning: PlatformTuning['irc'] = FAST_IRC, watcher?: IrcUser) {
    harness = await startGatewayHarness(
      {
        agent,
        platforms: {
          irc: { host: server.host, port: server.port, tls: false, nick: BOT, channels: [CHANNEL], allow: ['alice'] },
        },
        // The shortest lease: the periodic sweep (a third of it) then runs every second.
        delivery: { leaseSeconds: 2 },
      },
      { tuning: { irc: tuning } },
    );
    await harness.waitFor('platform.state', (event) => event.platform.name === 'irc' && event.platform.state === 'connected');
    if (watcher) await waitUntil(`${BOT} to join ${CHANNEL}`, () => watcher.joins.some((join) => join.nick === BOT));
    return harness;
  }

  async function call<M extends MethodName>(method: M, params?: unknown): Promise<ApiResults[M]> {
    const result = await harness!.gateway.api.dispatch(method, params);
    if (!result.ok) throw new Error(`${method}: ${result.error.message}`);
    return result.value as ApiResults[M];
  }

  async function transcript(sessionId: string): Promise<TranscriptMessage[]> {
    return (await call('getTranscript', { sessionId })).messages as unknown as TranscriptMessage[];
  }

  /** The PRIVMSG lines a reply becomes on IRC: every chunk the ledger recorded, split as the adapter splits it. */
  function expectedLines(obligationId: string, target: string, nick = BOT): string[] {
    const chunks = harness!.gateway.deliveries.ledger.chunks(obligationId);
    return chunks.flatMap((chunk) => toProtocolLines(chunk.text, textBudget(nick, target)));
  }

  /**
   * With the server down and the bot retrying every second: right after one of its
   * failed attempts, starts the server and brings alice back online, so that she is
   * there when the bot reconnects by itself (IRC refuses a message to a nick that
   * is not online — 401 — and the reply would fail for good).
   */
  async function restartServerBeforeTheBotReconnects(): Promise<IrcUser> {
    await harness!.waitForNext('platform.state', (event) => event.platform.name === 'irc' && event.platform.state === 'disconnected');
    await server.start();
    const alice = await user('alice');
    expect(harness!.gateway.platforms.status('irc')?.state, 'alice must be back before the bot reconnects').not.toBe('connected');
    await harness!.waitForNext('platform.state', (event) => event.platform.name === 'irc' && event.platform.state === 'connected');
    return alice;
  }

  const delivered = (obligationId: string) =>
    harness!.waitFor('delivery.changed', (event) => event.delivery.id === obligationId && event.delivery.state === 'delivered');

  it('answers a user in a channel and in a direct message; the replies arrive, and transcript and ledger agree', async () => {
    const alice = await user('alice', [CHANNEL]);
    await startGateway({ type: 'builtin' }, FAST_IRC, alice);

    alice.client.say(CHANNEL, `${BOT}: hello from the channel`);
    alice.client.say(BOT, 'hello in private');
    await waitUntil('two replies recorded', () => harness!.events.filter((event) => event.type === 'reply.recorded').length === 2);
    const recorded = harness!.events.flatMap((event) => (event.type === 'reply.recorded' ? [event] : []));
    for (const reply of recorded) await delivered(reply.obligationId);
    await alice.roundTrip();

    const byChat = new Map<string, { sessionId: string; obligationId: string }>();
    for (const reply of recorded) {
      const row = harness!.gateway.deliveries.ledger.getDelivery(reply.obligationId)!;
      expect(row).toMatchObject({ platform: 'irc', state: 'delivered', attempts: 0, chunksDelivered: row.chunksTotal });
      byChat.set(row.chatId, reply);
    }
    expect([...byChat.keys()].sort()).toEqual([CHANNEL, 'alice']);

    for (const [chatId, asked] of [
      [CHANNEL, 'hello from the channel'],
      ['alice', 'hello in private'],
    ] as const) {
      const { sessionId, obligationId } = byChat.get(chatId)!;
      const messages = await transcript(sessionId);
      expect(messages.map((message) => message.role)).toEqual(['user', 'assistant']);
      expect(messages[0]!.text).toBe(asked);
      expect(messages[1]!.obligationId).toBe(obligationId);
      expect(messages[1]!.text).toMatch(/built-in agent/i);
      // What alice saw, line for line, is what the transcript says was answered.
      expect(linesFrom(alice, BOT, chatId)).toEqual(toProtocolLines(messages[1]!.text, textBudget(BOT, chatId)));
      expect(linesFrom(alice, BOT, chatId)).toEqual(expectedLines(obligationId, chatId));
    }
    expect((await call('listDeliveries', {})).deliveries.every((row) => row.state === 'delivered')).toBe(true);
    expect(harness!.gateway.deliveries.ledger.owedCount()).toBe(0);
  });

  it('answers a direct message while degraded (one channel refused): the joined channel and DMs still get replies', async () => {
    const carol = await user('carol', ['#locked']);
    carol.client.raw('MODE', '#locked', '+k', 'sekrit');
    await carol.roundTrip();
    const alice = await user('alice', [CHANNEL]);
    harness = await startGatewayHarness(
      {
        agent: { type: 'builtin' },
        platforms: { irc: { host: server.host, port: server.port, tls: false, nick: BOT, channels: [CHANNEL, '#locked'], allow: ['alice'] } },
        delivery: { leaseSeconds: 2 },
      },
      { tuning: { irc: FAST_IRC } },
    );
    await harness.waitFor('platform.state', (event) => event.platform.name === 'irc' && event.platform.state === 'degraded');
    await waitUntil(`${BOT} to join ${CHANNEL}`, () => alice.joins.some((join) => join.nick === BOT));
    alice.client.say(BOT, 'are you there?');
    alice.client.say(CHANNEL, `${BOT}: and here?`);
    await waitUntil('a reply in the channel and one by DM', () => linesFrom(alice, BOT, CHANNEL).length >= 1 && linesFrom(alice, BOT, 'alice').length >= 1);
    const replies = harness.events.filter((event) => event.type === 'reply.recorded');
    expect(replies).toHaveLength(2);
    for (const reply of replies) {
      await harness.waitFor('delivery.changed', (event) => event.delivery.id === reply.obligationId && event.delivery.state === 'delivered');
    }
    expect((await call('getOverview')).deliveries.owed).toBe(0);
  });

  it('delivers a 10 000-character reply complete and in order, every line within 512 bytes', async () => {
    const alice = await user('alice');
    await startGateway({ type: 'command', command: process.execPath, args: [REPLY_AGENT, '--chars', '10000'] });

    alice.client.say(BOT, 'tell me a long story');
    const recorded = await harness!.waitFor('reply.recorded');
    await delivered(recorded.obligationId);
    await alice.roundTrip();

    const reply = longText(10_000);
    expect([...reply]).toHaveLength(10_000);
    const messages = await transcript(recorded.sessionId);
    expect(messages[1]!.text).toBe(reply);

    const row = harness!.gateway.deliveries.ledger.getDelivery(recorded.obligationId)!;
    expect(row.chunksTotal).toBeGreaterThanOrEqual(3); // 10 783 bytes in chunks of under 4000
    expect(row).toMatchObject({ state: 'delivered', attempts: 0, chunksDelivered: row.chunksTotal });

    const received = linesFrom(alice, BOT, 'alice');
    expect(received).toEqual(expectedLines(recorded.obligationId, 'alice'));
    // Complete and in order: the lines put together are the reply (IRC has no blank lines or line breaks).
    expect(received.join(' ').replace(/\s+/g, ' ')).toBe(reply.replace(/\s+/g, ' '));
    const relayed = alice.rawLines.filter((line) => line.startsWith(`:${BOT}!`) && line.includes(' PRIVMSG alice :'));
    expect(relayed).toHaveLength(received.length);
    for (const line of relayed) expect(Buffer.byteLength(line + '\r\n')).toBeLessThanOrEqual(IRC_LINE_BYTES);
  });

  it('keeps a reply owed while the server is down, and delivers it once after the adapter reconnects by itself', async () => {
    const started = join(scratch, 'started');
    const go = join(scratch, 'go');
    // A second between reconnect attempts: room to bring the server and alice back before the bot (see below).
    await startGateway(
      { type: 'command', command: process.execPath, args: [REPLY_AGENT, '--started', started, '--wait-for', go] },
      { ...FAST_IRC, reconnectDelayMs: () => 1_000 },
    );
    const alice = await user('alice');
    alice.client.say(BOT, 'are you still there?');
    const turn = await harness!.waitFor('turn.started');
    await waitUntil('the agent to start', () => existsSync(started));

    // The server goes away while the agent is answering.
    const down = harness!.waitForNext('platform.state', (event) => event.platform.name === 'irc' && event.platform.state === 'disconnected');
    await server.stop();
    await down;
    writeFileSync(go, '');
    const recorded = await harness!.waitFor('reply.recorded', (event) => event.sessionId === turn.sessionId);

    // Owed, and visible as owed, while IRC is unreachable.
    const owed = (await call('listDeliveries', {})).deliveries;
    expect(owed).toHaveLength(1);
    expect(owed[0]).toMatchObject({ id: recorded.obligationId, platform: 'irc', chatId: 'alice', chunksDelivered: 0 });
    expect(['pending', 'failed']).toContain(owed[0]!.state);
    expect(harness!.gateway.deliveries.ledger.owedCount()).toBe(1);

    const aliceAgain = await restartServerBeforeTheBotReconnects();
    await delivered(recorded.obligationId);
    // Nothing more is owed, and a sweep sends nothing again.
    expect((await call('sweepNow')).claimed).toBe(0);
    await aliceAgain.roundTrip();

    expect(linesFrom(aliceAgain, BOT)).toEqual(['You said: are you still there?']);
    expect(linesFrom(alice, BOT)).toEqual([]);
    // Never handed to a server that was down: no attempt spent.
    expect(harness!.gateway.deliveries.ledger.getDelivery(recorded.obligationId)).toMatchObject({
      state: 'delivered',
      attempts: 0,
      chunksDelivered: 1,
    });
    const messages = await transcript(recorded.sessionId);
    expect(messages.map((message) => [message.role, message.text])).toEqual([
      ['user', 'are you still there?'],
      ['assistant', 'You said: are you still there?'],
    ]);
  });

  it('resumes a reply the server cut off mid-chunk after it is back: the cut chunk again behind the marker, then the rest', async () => {
    const alice = await user('alice');
    await startGateway(
      { type: 'command', command: process.execPath, args: [REPLY_AGENT, '--chars', '10000'] },
      // Slow enough lines to stop the server between two of them.
      { ...FAST_IRC, pacing: { burst: 4, intervalMs: 80 }, reconnectDelayMs: () => 1_000 },
    );
    alice.client.say(BOT, 'tell me a long story');
    const recorded = await harness!.waitFor('reply.recorded');
    const chunks = harness!.gateway.deliveries.ledger.chunks(recorded.obligationId).map((chunk) => chunk.text);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    const lines = (chunk: string) => toProtocolLines(chunk, textBudget(BOT, 'alice'));

    // Stop the server once the second chunk has begun to arrive.
    await waitUntil('two lines of the second chunk', () => linesFrom(alice, BOT).length >= lines(chunks[0]!).length + 2);
    const failed = harness!.waitForNext('delivery.changed', (event) => event.delivery.id === recorded.obligationId && event.delivery.state === 'failed');
    await server.stop();
    expect((await failed).delivery).toMatchObject({ chunksDelivered: 1, attempts: 1 });
    expect(harness!.gateway.deliveries.ledger.chunks(recorded.obligationId).map((chunk) => chunk.state)).toEqual([
      'delivered',
      'sending',
      ...chunks.slice(2).map(() => 'owed'),
    ]);
    const before = linesFrom(alice, BOT);
    expect(before).toEqual(chunks.flatMap(lines).slice(0, before.length));

    // The failed row is retried after its backoff (5 s), by the periodic sweep.
    const aliceAgain = await restartServerBeforeTheBotReconnects();
    await delivered(recorded.obligationId);
    await aliceAgain.roundTrip();
    // Chunk 0 arrived and is not repeated; chunk 1 may have arrived in part, so it comes again, marked.
    expect(linesFrom(aliceAgain, BOT)).toEqual([RESEND_MARKER, ...chunks.slice(1).flatMap(lines)]);
    expect(harness!.gateway.deliveries.ledger.getDelivery(recorded.obligationId)).toMatchObject({ state: 'delivered', attempts: 1 });
  });

  it('gives a sender who is not on the allowlist no agent turn, and one refusal', async () => {
    const mallory = await user('mallory', [CHANNEL]);
    const alice = await user('alice');
    await startGateway({ type: 'builtin' }, FAST_IRC, mallory);

    mallory.client.say(BOT, 'let me in');
    await waitUntil('the refusal', () => mallory.notices.some((notice) => notice.nick === BOT));
    mallory.client.say(BOT, 'please?');
    mallory.client.say(CHANNEL, `${BOT}: pretty please?`);
    // The server has relayed mallory's lines to the bot before it answers this PING,
    // so the bot reads them before anything alice sends next.
    await mallory.roundTrip();
    alice.client.say(BOT, 'it is me');
    const recorded = await harness!.waitFor('reply.recorded');
    await delivered(recorded.obligationId);
    await mallory.roundTrip();

    expect(harness!.events.filter((event) => event.type === 'turn.started')).toHaveLength(1);
    expect(harness!.events.filter((event) => event.type === 'reply.recorded')).toHaveLength(1);
    const sessions = (await call('listSessions', {})).sessions;
    expect(sessions).toHaveLength(1);
    expect((await transcript(sessions[0]!.sessionId)).map((message) => message.text)[0]).toBe('it is me');
    expect((await call('listDeliveries', {})).deliveries.map((row) => row.chatId)).toEqual(['alice']);
    expect(linesFrom(mallory, BOT)).toEqual([]);
    expect(mallory.notices.filter((notice) => notice.nick === BOT)).toHaveLength(1);
  });
});
