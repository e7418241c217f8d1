import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiResults, MethodName } from '../src/shared/api';
import { ENCRYPTED_NOTICE, MATRIX_CHUNK_BYTES } from '../src/main/gateway/platforms/matrix/matrix-adapter';
import { startGatewayHarness, type GatewayHarness } from './support/gateway-harness';
import { FakeMatrix } from './support/fake-matrix';
import { longText } from './fixtures/long-text.mjs';
import { waitUntil } from './support/wait';

/**
 * The whole gateway in this process — pipeline, agent, ledger, sweeps — with
 * its Matrix adapter (plain fetch) syncing against the fake homeserver over real HTTP.
 */

const REPLY_AGENT = fileURLToPath(new URL('./fixtures/reply-agent.mjs', import.meta.url));

describe('the gateway on Matrix (the fake homeserver)', () => {
  let fake: FakeMatrix;
  let harness: GatewayHarness | undefined;
  let scratch: string;
  let bot: string;
  let alice: string;
  let bob: string;
  let token: string;

  beforeEach(async () => {
    fake = new FakeMatrix();
    await fake.start();
    bot = fake.addUser('homing', { password: 'bot-password', displayName: 'Homing' });
    alice = fake.addUser('alice', { displayName: 'Alice' });
    bob = fake.addUser('bob', { displayName: 'Bob' });
    token = fake.issueToken(bot, 'HOMINGDEV');
    scratch = mkdtempSync(join(tmpdir(), 'homing-mx-e2e-'));
  });

  afterEach(async () => {
    await harness?.close();
    harness = undefined;
    await fake.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  async function startGateway(agentArgs: string[] = [], matrix: Record<string, unknown> = {}, env: Record<string, string> = { MATRIX_TOKEN: token }) {
    harness = await startGatewayHarness(
      {
        agent: { type: 'command', command: process.execPath, args: [REPLY_AGENT, ...agentArgs] },
        platforms: {
          matrix: {
            homeserver: fake.baseUrl,
            user: bot,
            accessTokenEnv: 'MATRIX_TOKEN',
            allowFrom: [alice],
            pollTimeoutSeconds: 2,
            ...matrix,
          },
        },
        delivery: { leaseSeconds: 2 },
      },
      { env, tuning: { matrix: { reconnectDelayMs: () => 200, typingIntervalMs: 300 } } },
    );
    return harness;
  }

  const connected = () => harness!.waitFor('platform.state', (event) => event.platform.name === 'matrix' && event.platform.state === 'connected');

  async function call<M extends MethodName>(method: M, params?: unknown): Promise<ApiResults[M]> {
    const result = await harness!.gateway.api.dispatch(method, params);
    if (!result.ok) throw new Error(`${method}: ${result.error.message}`);
    return result.value as ApiResults[M];
  }

  const delivered = (obligationId: string) =>
    harness!.waitFor('delivery.changed', (event) => event.delivery.id === obligationId && event.delivery.state === 'delivered', 30_000);

  /** Alice opens a direct chat with the bot (as Element does: is_direct) and the bot joins it. */
  async function directChat(from = alice): Promise<string> {
    const room = fake.createRoom(from, { invite: [bot], direct: true });
    await waitUntil('the bot in the direct chat', () => fake.membership(bot, room) === 'join', 15_000);
    return room;
  }

  it('answers a direct message in the same room, formatted and plain, with typing shown while the agent works', async () => {
    await startGateway(['--delay-ms', '700']);
    await connected();
    const room = await directChat();
    fake.userSays(alice, room, 'hello *there*');
    const recorded = await harness!.waitFor('reply.recorded', undefined, 20_000);
    await delivered(recorded.obligationId);

    const [reply] = fake.postedBy(bot, room);
    expect(reply!.content).toMatchObject({ msgtype: 'm.text', body: 'You said: hello there', format: 'org.matrix.custom.html', formatted_body: 'You said: hello <em>there</em>' });
    // A direct chat needs no reply quote.
    expect(reply!.content['m.relates_to']).toBeUndefined();
    expect(reply!.txnId).toMatch(/^[0-9a-f]{24}$/);
    expect(reply!.deviceId).toBe('HOMINGDEV');
    expect(harness!.gateway.deliveries.ledger.getDelivery(recorded.obligationId)).toMatchObject({ platform: 'matrix', chatId: room, state: 'delivered', attempts: 0 });
    const typing = fake.typing.filter((entry) => entry.roomId === room);
    expect(typing[0]).toMatchObject({ userId: bot, typing: true });
    expect(typing.at(-1)).toMatchObject({ typing: false });
    const session = (await call('listSessions')).sessions.find((entry) => entry.sessionId === recorded.sessionId)!;
    expect(session.title).toContain('Alice');
    // Our own echo came back in the next sync and was not taken as a message.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(harness!.events.filter((event) => event.type === 'reply.recorded')).toHaveLength(1);
  });

  it('in a room answers allowed people when mentioned, as a reply, and declines invites from strangers', async () => {
    await startGateway();
    await connected();
    const room = fake.createRoom(alice, { name: 'Family', invite: [bot], join: [bob] });
    const strangers = fake.createRoom(bob, { name: 'Strangers', invite: [bot] });
    await waitUntil('the bot in the room', () => fake.membership(bot, room) === 'join', 15_000);
    await waitUntil('the stranger\'s invite declined', () => fake.membership(bot, strangers) === 'leave', 15_000);
    fake.userSays(alice, room, 'just chatting');
    fake.userSays(bob, room, 'Homing: I am not allowed');
    const asked = fake.userSays(alice, room, 'Homing: one', { mentions: [bot] });
    await waitUntil('the first reply', () => fake.postedBy(bot, room).length === 1, 15_000);
    const first = fake.postedBy(bot, room)[0]!;
    expect(first.body).toBe('You said: one');
    expect(first.content['m.relates_to']).toEqual({ 'm.in_reply_to': { event_id: asked.event_id } });
    // A reply to the bot addresses it; so does its name at the start.
    fake.userSays(alice, room, 'two', { replyTo: first.eventId });
    fake.userSays(alice, room, 'homing, three');
    await waitUntil('three replies', () => fake.postedBy(bot, room).length === 3, 15_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(fake.postedBy(bot, room).map((message) => message.body)).toEqual(['You said: one', 'You said: two', 'You said: three']);
    const sessions = (await call('listSessions')).sessions;
    expect(sessions.map((entry) => entry.title)).toEqual(['Family']);
    // The window lists the rooms with their names.
    const status = (await call('getOverview')).platforms.find((platform) => platform.name === 'matrix')!;
    expect(status.rooms).toEqual([{ id: room, name: 'Family', direct: false, encrypted: false }]);
  });

  it('gives a thread its own conversation and answers in the thread', async () => {
    await startGateway([], { rooms: {} });
    await connected();
    const room = fake.createRoom(alice, { name: 'Projects', invite: [bot] });
    await waitUntil('the bot in the room', () => fake.membership(bot, room) === 'join', 15_000);
    const root = fake.userSays(alice, room, 'Homing: the garden plan');
    await waitUntil('the room reply', () => fake.postedBy(bot, room).length === 1, 15_000);
    const inThread = fake.userSays(alice, room, 'Homing: in the thread', { threadRoot: root.event_id });
    await waitUntil('the thread reply', () => fake.postedBy(bot, room).length === 2, 15_000);
    // A thread the bot answered in needs no mention.
    fake.userSays(alice, room, 'and more', { threadRoot: root.event_id });
    await waitUntil('the second thread reply', () => fake.postedBy(bot, room).length === 3, 15_000);
    const [inRoom, threadReply, second] = fake.postedBy(bot, room);
    expect(inRoom!.content['m.relates_to']).toEqual({ 'm.in_reply_to': { event_id: root.event_id } });
    expect(threadReply).toMatchObject({ body: 'You said: in the thread' });
    expect(threadReply!.content['m.relates_to']).toEqual({ rel_type: 'm.thread', event_id: root.event_id, is_falling_back: true, 'm.in_reply_to': { event_id: inThread.event_id } });
    expect(second!.body).toBe('You said: and more');
    const keys = harness!.events.flatMap((event) => (event.type === 'reply.recorded' ? [event.sessionId] : []));
    expect(new Set(keys).size).toBe(2);
    expect(keys[1]).toBe(keys[2]);
    expect(harness!.gateway.sessions.deliveryAddress(keys[1]!)?.threadId).toBe(root.event_id);
  });

  it('sends a 40 000-character reply complete and in order, each event within its byte budget', async () => {
    await startGateway(['--chars', '40000']);
    await connected();
    const room = await directChat();
    fake.userSays(alice, room, 'long one please');
    const recorded = await harness!.waitFor('reply.recorded', undefined, 20_000);
    await delivered(recorded.obligationId);
    const sent = fake.postedBy(bot, room);
    expect(sent.length).toBeGreaterThanOrEqual(3);
    for (const message of sent) expect(Buffer.byteLength(message.body, 'utf8')).toBeLessThanOrEqual(MATRIX_CHUNK_BYTES);
    // Every word, whole and in order: nothing lost, nothing repeated.
    const words = (text: string) => text.split(/\s+/).filter((word) => word !== '');
    expect(sent.flatMap((message) => words(message.body))).toEqual(words(longText(40_000)));
    expect(new Set(sent.map((message) => message.txnId)).size).toBe(sent.length);
  });

  it('waits out M_LIMIT_EXCEEDED with its retry_after_ms and delivers without spending an attempt', async () => {
    await startGateway();
    await connected();
    const room = await directChat();
    fake.throttle(2_000, bot);
    const askedAt = Date.now();
    fake.userSays(alice, room, 'slowly');
    const recorded = await harness!.waitFor('reply.recorded', undefined, 20_000);
    await delivered(recorded.obligationId);
    const [reply] = fake.postedBy(bot, room);
    expect(reply!.at - askedAt).toBeGreaterThanOrEqual(1_500);
    expect(fake.throttled.length).toBeGreaterThanOrEqual(1);
    expect(fake.throttled.length, 'no hammering during the wait').toBeLessThanOrEqual(2);
    expect(harness!.gateway.deliveries.ledger.getDelivery(recorded.obligationId)).toMatchObject({ state: 'delivered', attempts: 0 });
  });

  it('after the token is revoked says the login failed, keeps the reply owed, and delivers it once a new token is stored', async () => {
    const go = join(scratch, 'go');
    // No variable: the token comes from the secret store, as the window saves it.
    await startGateway(['--wait-for', go], { accessTokenEnv: undefined }, {});
    await call('setSecret', { name: 'matrix.accessToken', value: token });
    await connected();
    const room = await directChat();
    fake.userSays(alice, room, 'are you there?');
    await harness!.waitFor('turn.started', undefined, 20_000);
    fake.revokeTokens(bot);
    const failed = await harness!.waitFor('platform.state', (event) => event.platform.name === 'matrix' && event.platform.state === 'auth-failed', 20_000);
    expect(failed.platform.error).toMatch(/refused the access token .*M_UNKNOWN_TOKEN.*store a new one/);
    expect(failed.platform.error).not.toContain(token);
    writeFileSync(go, '');
    const recorded = await harness!.waitFor('reply.recorded', undefined, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(fake.postedBy(bot, room)).toEqual([]);
    const owed = harness!.gateway.deliveries.ledger.getDelivery(recorded.obligationId)!;
    expect(['pending', 'failed']).toContain(owed.state);

    const fresh = fake.issueToken(bot, 'HOMINGDEV');
    await call('setSecret', { name: 'matrix.accessToken', value: fresh });
    await delivered(recorded.obligationId);
    expect(fake.postedBy(bot, room).map((message) => message.body)).toEqual(['You said: are you there?']);
  });

  it('tells an encrypted room once that it cannot read it, and lists the room as encrypted', async () => {
    await startGateway();
    await connected();
    const room = fake.createRoom(alice, { invite: [bot], direct: true, encrypted: true });
    await waitUntil('the bot in the room', () => fake.membership(bot, room) === 'join', 15_000);
    fake.userSaysEncrypted(alice, room);
    fake.userSaysEncrypted(alice, room);
    await waitUntil('the notice', () => fake.postedBy(bot, room).length === 1, 15_000);
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(fake.postedBy(bot, room).map((message) => [message.content.msgtype, message.body])).toEqual([['m.notice', ENCRYPTED_NOTICE]]);
    const status = (await call('getOverview')).platforms.find((platform) => platform.name === 'matrix')!;
    expect(status.rooms).toEqual([expect.objectContaining({ id: room, direct: true, encrypted: true })]);
    expect(harness!.events.filter((event) => event.type === 'reply.recorded')).toHaveLength(0);
  });

  it('takes an edit made before the message is taken as its text, and drops a message redacted before', async () => {
    await startGateway();
    await connected();
    const room = await directChat();
    // Posted together: one sync hands all four.
    const original = fake.userSays(alice, room, 'helo');
    fake.userEdits(alice, room, original.event_id, 'hello, edited');
    const regretted = fake.userSays(alice, room, 'oops');
    fake.userRedacts(alice, room, regretted.event_id);
    await waitUntil('the reply', () => fake.postedBy(bot, room).length === 1, 15_000);
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(fake.postedBy(bot, room).map((message) => message.body)).toEqual(['You said: hello, edited']);
    // A later edit of a message already answered is ignored.
    fake.userEdits(alice, room, original.event_id, 'changed my mind');
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(fake.postedBy(bot, room)).toHaveLength(1);
  });

  it('gives a stranger in a direct chat a pairing code, and answers once the owner approves', async () => {
    await startGateway();
    await connected();
    const room = await directChat(bob);
    fake.userSays(bob, room, 'hi there');
    await waitUntil('the pairing code', () => fake.postedBy(bot, room).length === 1, 15_000);
    const code = /pairing code: (\S+)/.exec(fake.postedBy(bot, room)[0]!.body)?.[1];
    expect(code).toBeDefined();
    expect(harness!.events.filter((event) => event.type === 'reply.recorded')).toHaveLength(0);
    await call('decidePairing', { code, decision: 'approve' });
    await waitUntil('the greeting', () => fake.postedBy(bot, room).length === 2, 15_000);
    fake.userSays(bob, room, 'now?');
    await waitUntil('the answer', () => fake.postedBy(bot, room).length === 3, 15_000);
    expect(fake.postedBy(bot, room).at(-1)!.body).toBe('You said: now?');
  });

  it('fails a reply for good when the bot was removed from the room (403 M_FORBIDDEN), saying why', async () => {
    const go = join(scratch, 'go');
    await startGateway(['--wait-for', go]);
    await connected();
    const room = fake.createRoom(alice, { name: 'Short-lived', invite: [bot] });
    await waitUntil('the bot in the room', () => fake.membership(bot, room) === 'join', 15_000);
    fake.userSays(alice, room, 'Homing: hi');
    await harness!.waitFor('turn.started', undefined, 20_000);
    fake.mute(bot, room);
    writeFileSync(go, '');
    const recorded = await harness!.waitFor('reply.recorded', undefined, 20_000);
    const failed = await harness!.waitFor('delivery.changed', (event) => event.delivery.id === recorded.obligationId && event.delivery.state === 'failed', 20_000);
    expect(failed.delivery.nextAttemptAt).toBeNull();
    expect(failed.delivery.lastError).toMatch(/may not write in this room.*M_FORBIDDEN/);
  });

  it('logs in with a password on the same device every time', async () => {
    await startGateway([], { accessTokenEnv: undefined, passwordEnv: 'MATRIX_PASSWORD' }, { MATRIX_PASSWORD: 'bot-password' });
    await connected();
    const devices = fake.devicesOf(bot).filter((device) => device !== 'HOMINGDEV');
    expect(devices).toHaveLength(1);
    const dataDir = harness!.dataDir;
    await harness!.gateway.stop(1_000);
    harness = await startGatewayHarness(null, {
      dataDir,
      env: { MATRIX_PASSWORD: 'bot-password' },
      tuning: { matrix: { reconnectDelayMs: () => 200 } },
    });
    await connected();
    expect(fake.devicesOf(bot).filter((device) => device !== 'HOMINGDEV')).toEqual(devices);
    await harness.close();
    harness = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });
});
