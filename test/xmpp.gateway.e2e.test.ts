import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ApiResults, MethodName } from '../src/shared/api';
import { originIdFor } from '../src/main/gateway/platforms/xmpp/xmpp-adapter';
import { startGatewayHarness, type GatewayHarness } from './support/gateway-harness';
import { startProsody, type RunningProsody } from './support/prosody';
import { waitUntil } from './support/wait';
import { XmppUser } from './support/xmpp-user';

/**
 * The whole gateway in this process — pipeline, agent, ledger, sweeps — with
 * its XMPP adapter (@xmpp/client) logged in to a real prosody on loopback,
 * and people on the same server with plain clients of their own.
 */

const REPLY_AGENT = fileURLToPath(new URL('./fixtures/reply-agent.mjs', import.meta.url));
const PASSWORDS = { homing: 'homing-pw', alice: 'alice-pw', bob: 'bob-pw', carol: 'carol-pw', dave: 'dave-pw' } as const;

describe('the gateway on XMPP (a real prosody)', () => {
  let prosody: RunningProsody;
  let harness: GatewayHarness | undefined;
  let scratch: string;
  const users: XmppUser[] = [];
  let roomSeq = 0;
  let room: string;

  beforeAll(async () => {
    prosody = await startProsody({ users: PASSWORDS });
  }, 60_000);

  afterAll(async () => {
    await prosody?.dispose();
  });

  beforeEach(() => {
    scratch = mkdtempSync(join(tmpdir(), 'homing-xmpp-e2e-'));
    // A room of its own per test: rooms live in the server's memory.
    room = `lab${++roomSeq}@${prosody.mucDomain}`;
  });

  afterEach(async () => {
    await harness?.close();
    harness = undefined;
    await Promise.all(users.splice(0).map((user) => user.stop()));
    rmSync(scratch, { recursive: true, force: true });
  });

  async function person(name: keyof typeof PASSWORDS): Promise<XmppUser> {
    const user = new XmppUser(name, PASSWORDS[name], prosody.port);
    users.push(user);
    await user.start();
    return user;
  }

  async function startGateway(agentArgs: string[] = [], xmpp: Record<string, unknown> = {}) {
    harness = await startGatewayHarness(
      {
        agent: { type: 'command', command: process.execPath, args: [REPLY_AGENT, ...agentArgs] },
        platforms: {
          xmpp: {
            jid: `homing@${prosody.domain}`,
            host: '127.0.0.1',
            port: prosody.port,
            security: 'none',
            passwordEnv: 'XMPP_PASSWORD',
            allowFrom: [`alice@${prosody.domain}`],
            rooms: { [room]: {} },
            ...xmpp,
          },
        },
        delivery: { leaseSeconds: 2 },
      },
      { env: { XMPP_PASSWORD: PASSWORDS.homing }, tuning: { xmpp: { reconnectDelayMs: () => 200, rejoinDelayMs: 300, ackTimeoutMs: 5_000 } } },
    );
    await harness.waitFor('platform.state', (event) => event.platform.name === 'xmpp' && event.platform.state === 'connected', 20_000);
    return harness;
  }

  async function call<M extends MethodName>(method: M, params?: unknown): Promise<ApiResults[M]> {
    const result = await harness!.gateway.api.dispatch(method, params);
    if (!result.ok) throw new Error(`${method}: ${result.error.message}`);
    return result.value as ApiResults[M];
  }

  const delivered = (obligationId: string) =>
    harness!.waitFor('delivery.changed', (event) => event.delivery.id === obligationId && event.delivery.state === 'delivered', 20_000);

  const homing = () => `homing@${prosody.domain}`;

  it('answers a one-to-one message in the same chat, with an origin-id derived from the chunk key, composing then active', async () => {
    const alice = await person('alice');
    await startGateway(['--delay-ms', '600']);
    await alice.say(homing(), 'hello there');
    const recorded = await harness!.waitFor('reply.recorded', undefined, 20_000);
    await delivered(recorded.obligationId);

    const replies = alice.bodiesFrom(homing());
    expect(replies.map((message) => message.body)).toEqual(['You said: hello there']);
    const chunk = harness!.gateway.deliveries.ledger.chunks(recorded.obligationId)[0]!;
    expect(replies[0]).toMatchObject({ type: 'chat', originId: originIdFor(chunk.idempotencyKey), id: originIdFor(chunk.idempotencyKey), chatState: 'active' });
    // XEP-0085: composing while the agent worked, before the reply.
    const states = alice.received.filter((message) => message.from.startsWith(homing()) && message.body === null).map((message) => message.chatState);
    expect(states[0]).toBe('composing');
    const composingAt = alice.received.find((message) => message.chatState === 'composing')!.at;
    expect(composingAt).toBeLessThanOrEqual(replies[0]!.at);
    expect(harness!.gateway.deliveries.ledger.getDelivery(recorded.obligationId)).toMatchObject({ platform: 'xmpp', chatId: alice.jid, state: 'delivered', attempts: 0 });
    const session = (await call('listSessions')).sessions.find((entry) => entry.sessionId === recorded.sessionId)!;
    expect(session.title).toContain('alice');
  });

  it('in a room answers only when addressed by nick, never its own reflection, and joins without the history', async () => {
    const alice = await person('alice');
    const bob = await person('bob');
    await alice.join(room);
    await alice.sayInRoom(room, 'homing: said before the agent came: not for now');
    await startGateway();
    await bob.join(room);
    await waitUntil('the agent joined', () => harness!.gateway.platforms.get('xmpp')!.canSend!({ chatId: room, threadId: null }), 10_000);
    await bob.sayInRoom(room, 'just chatting');
    await bob.sayInRoom(room, 'homing: one');
    await waitUntil('the first reply', () => bob.bodiesFrom(room).filter((message) => message.from === `${room}/homing`).length === 1, 20_000);
    await alice.sayInRoom(room, 'Homing, two');
    await waitUntil('the second reply', () => bob.bodiesFrom(room).filter((message) => message.from === `${room}/homing`).length === 2, 20_000);
    await bob.sayInRoom(room, '@homing three');
    await waitUntil('three replies', () => bob.bodiesFrom(room).filter((message) => message.from === `${room}/homing`).length === 3, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const fromAgent = bob.bodiesFrom(room).filter((message) => message.from === `${room}/homing`);
    expect(fromAgent.map((message) => message.body)).toEqual(['You said: one', 'You said: two', 'You said: three']);
    expect(fromAgent.every((message) => message.type === 'groupchat' && message.originId?.startsWith('homing-'))).toBe(true);
    // One conversation for the room, three user turns: the agent's own messages (reflected back to it) were not taken.
    const sessions = (await call('listSessions')).sessions;
    expect(sessions).toHaveLength(1);
    const messages = (await call('getTranscript', { sessionId: sessions[0]!.sessionId })).messages;
    expect(messages.filter((message) => message.role === 'user').map((message) => message.text)).toEqual(['one', 'two', 'three']);
  });

  it('sends a long reply complete and in order, in messages within maxMessageBytes', async () => {
    const alice = await person('alice');
    const paragraphs = Array.from({ length: 60 }, (_, i) => `Paragraph ${i} says something long enough to need several messages — ünïcödé & <xml> too.`);
    const file = join(scratch, 'reply.md');
    writeFileSync(file, paragraphs.join('\n\n'));
    await startGateway(['--reply-file', file], { maxMessageBytes: 1_000 });
    await alice.say(homing(), 'long one please');
    const recorded = await harness!.waitFor('reply.recorded', undefined, 20_000);
    await delivered(recorded.obligationId);
    const sent = alice.bodiesFrom(homing());
    expect(sent.length).toBeGreaterThanOrEqual(5);
    for (const message of sent) expect(Buffer.byteLength(message.body!)).toBeLessThanOrEqual(1_000);
    const numbers = [...sent.map((message) => message.body).join('\n\n').matchAll(/Paragraph (\d+) says something long enough to need several messages — ünïcödé & <xml> too\./g)].map((match) => Number(match[1]));
    expect(numbers).toEqual(paragraphs.map((_, i) => i));
    expect(new Set(sent.map((message) => message.originId)).size).toBe(sent.length);
  });

  it('keeps strangers out: the allowlist admits alice only; pairing gives a code, approval lets them in', async () => {
    const carol = await person('carol');
    const dave = await person('dave');
    const alice = await person('alice');
    await startGateway([], { dmPolicy: 'allowlist' });
    await dave.say(homing(), 'let me in');
    await alice.say(homing(), 'I am allowed');
    await waitUntil('alice answered', () => alice.bodiesFrom(homing()).length === 1, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(dave.bodiesFrom(homing())).toEqual([]);
    expect(harness!.events.filter((event) => event.type === 'turn.started')).toHaveLength(1);
    await harness!.close();
    harness = undefined;

    await startGateway([], { dmPolicy: 'pairing' });
    await carol.say(homing(), 'hi, who are you?');
    await carol.say(homing(), 'hello??');
    await waitUntil('a code', () => carol.bodiesFrom(homing()).length === 1, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(carol.bodiesFrom(homing())).toHaveLength(1);
    expect(harness!.events.filter((event) => event.type === 'turn.started')).toHaveLength(0);
    const request = (await call('listPairing')).requests.find((entry) => entry.platform === 'xmpp')!;
    expect(carol.bodiesFrom(homing())[0]!.body).toContain(request.code);
    expect(JSON.stringify(await call('listPairing'))).not.toContain(carol.jid);
    await call('decidePairing', { code: request.code, decision: 'approve' });
    await waitUntil('the approval notice', () => carol.bodiesFrom(homing()).length === 2, 10_000);
    await carol.say(homing(), 'now?');
    await waitUntil('the answer', () => carol.bodiesFrom(homing()).length === 3, 20_000);
    expect(carol.bodiesFrom(homing())[2]!.body).toBe('You said: now?');
  });

  it('delivers replies owed while prosody restarts once it is back, and joins its rooms again', async () => {
    const alice = await person('alice');
    const go = join(scratch, 'go');
    await startGateway(['--wait-for', go]);
    await alice.join(room);
    await waitUntil('the agent joined', () => harness!.gateway.platforms.get('xmpp')!.canSend!({ chatId: room, threadId: null }), 10_000);
    await alice.say(homing(), 'answer me after the restart');
    await alice.sayInRoom(room, 'homing: and in the room');
    await waitUntil('both saved', async () => (await call('listSessions')).sessions.length === 2, 15_000);
    await prosody.stop();
    writeFileSync(go, '');
    await waitUntil('both replies owed', async () => harness!.events.filter((event) => event.type === 'reply.recorded').length === 2, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await prosody.start();
    await alice.stop();
    users.splice(users.indexOf(alice), 1);
    const back = await person('alice');
    await back.join(room);
    await waitUntil('the direct reply', () => back.bodiesFrom(homing()).length === 1, 30_000);
    await waitUntil('the room reply', () => back.bodiesFrom(room).some((message) => message.from === `${room}/homing`), 30_000);
    expect(back.bodiesFrom(homing())[0]!.body).toBe('You said: answer me after the restart');
    expect(back.bodiesFrom(room).filter((message) => message.from === `${room}/homing`).map((message) => message.body)).toEqual(['You said: and in the room']);
    await waitUntil('both marked delivered', async () => (await call('listDeliveries', {})).deliveries.every((row) => row.state === 'delivered'), 10_000);
    expect((await call('listDeliveries', {})).deliveries).toHaveLength(2);
  }, 90_000);

  it('names the server\'s refusal for an account or room that does not exist, as surely not delivered (no marker on the retry)', async () => {
    await startGateway([], { dmPolicy: 'open' });
    const adapter = harness!.gateway.platforms.get('xmpp')!;
    const result = await adapter.send('hello?', { chatId: `nobody@${prosody.domain}`, threadId: null, replyTo: null, idempotencyKey: 'k-nobody' });
    expect(result).toMatchObject({ ok: false, notDelivered: true });
    expect(result.ok ? '' : result.error).toMatch(/service-unavailable|item-not-found/);
    const room = await adapter.send('hello?', { chatId: `nowhere@${prosody.mucDomain}`, threadId: null, replyTo: null, idempotencyKey: 'k-nowhere' });
    // A room that does not exist will not appear by waiting: permanent.
    expect(room).toMatchObject({ ok: false, notDelivered: true, permanent: true });
    expect(room.ok ? '' : room.error).toMatch(/item-not-found/);
  });
});
