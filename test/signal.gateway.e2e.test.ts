import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiResults, MethodName } from '../src/shared/api';
import { RESEND_MARKER } from '../src/main/gateway/delivery/marker';
import { startGatewayHarness, type GatewayHarness } from './support/gateway-harness';
import { FakeSignalCli, type FakeSignalGroup, type FakeSignalPerson } from './support/fake-signal-cli';
import { waitUntil } from './support/wait';
import { longText } from './fixtures/long-text.mjs';

/**
 * The whole gateway in this process — pipeline, agent, ledger, sweeps — with
 * its Signal adapter on the fake signal-cli daemon (JSON-RPC lines over real
 * TCP, manual receive mode unless a test says otherwise).
 */

const REPLY_AGENT = fileURLToPath(new URL('./fixtures/reply-agent.mjs', import.meta.url));

describe('the gateway on Signal (the adapter against the fake signal-cli daemon)', () => {
  let fake: FakeSignalCli;
  let harness: GatewayHarness | undefined;
  let alice: FakeSignalPerson;
  let bob: FakeSignalPerson;
  let family: FakeSignalGroup;
  let always: FakeSignalGroup;

  beforeEach(async () => {
    fake = await new FakeSignalCli().start();
    alice = fake.addPerson('alice');
    bob = fake.addPerson('bob');
    family = fake.addGroup('Family', [alice, bob]);
    always = fake.addGroup('Ask the bot', [alice]);
  });

  afterEach(async () => {
    await harness?.close();
    harness = undefined;
    await fake.stop();
  });

  async function startGateway(options: { agentArgs?: string[]; signal?: Record<string, unknown>; connected?: boolean } = {}) {
    harness = await startGatewayHarness(
      {
        agent: { type: 'command', command: process.execPath, args: [REPLY_AGENT, ...(options.agentArgs ?? [])] },
        platforms: {
          signal: {
            daemon: fake.address,
            account: fake.account.number,
            allowFrom: [alice.number],
            groups: { [family.id]: {}, [always.id]: { requireMention: false } },
            ...options.signal,
          },
        },
        delivery: { leaseSeconds: 2 },
      },
      { tuning: { signal: { reconnectDelayMs: () => 200, typingIntervalMs: 300 } } },
    );
    if (options.connected !== false) {
      await harness.waitFor('platform.state', (event) => event.platform.name === 'signal' && event.platform.state === 'connected', 30_000);
    }
    return harness;
  }

  async function call<M extends MethodName>(method: M, params?: unknown): Promise<ApiResults[M]> {
    const result = await harness!.gateway.api.dispatch(method, params);
    if (!result.ok) throw new Error(`${method}: ${result.error.message}`);
    return result.value as ApiResults[M];
  }

  const texts = (where: FakeSignalPerson | FakeSignalGroup) => fake.sentTo(where).map((sent) => sent.message);

  it('answers a direct message, quoting it, with the Markdown as text styles, showing typing meanwhile', async () => {
    await startGateway({ agentArgs: ['--delay-ms', '700'] });
    const asked = fake.userSays({ from: alice, text: 'hello **there**' });
    const recorded = await harness!.waitFor('reply.recorded', undefined, 20_000);
    await harness!.waitFor('delivery.changed', (event) => event.delivery.id === recorded.obligationId && event.delivery.state === 'delivered', 20_000);
    const [reply] = fake.sentTo(alice);
    // The reply agent echoes the text: its Markdown comes back as Signal styles over plain words.
    expect(reply!.message).toBe('You said: hello there');
    expect(reply!.textStyle).toEqual(['16:5:BOLD']);
    expect(reply!.quote).toEqual({ timestamp: asked.timestamp, author: alice.uuid });
    expect(fake.typing.some((entry) => entry.to === alice.uuid && !entry.stop)).toBe(true);
    await waitUntil('typing stopped', () => fake.typing.some((entry) => entry.to === alice.uuid && entry.stop), 5_000);
    expect(harness!.gateway.deliveries.ledger.getDelivery(recorded.obligationId)).toMatchObject({ platform: 'signal', chatId: alice.uuid, state: 'delivered', attempts: 0 });
  });

  it('in a group answers when mentioned or when its message is quoted, every message in an always-answer group, never strangers, unlisted groups or receipts', async () => {
    await startGateway();
    const elsewhere = fake.addGroup('Elsewhere', [alice]);
    const carol = fake.addPerson('carol');
    fake.userSays({ from: alice, group: family, text: 'just chatting' });
    fake.userSays({ from: alice, group: elsewhere, text: 'hi', mentionBot: true });
    fake.userSays({ from: carol, group: family, text: 'I am not allowed', mentionBot: true });
    fake.receipt(alice, 1);
    fake.userSays({ from: alice, group: family, text: 'one', mentionBot: true });
    await waitUntil('the first reply', () => texts(family).length === 1, 20_000);
    const first = fake.sentTo(family)[0]!;
    expect(first.message).toBe('You said: one');
    fake.userSays({ from: alice, group: family, text: 'two', quote: { timestamp: first.timestamp, author: fake.account } });
    fake.userSays({ from: alice, group: always, text: 'no mention needed' });
    await waitUntil('three replies', () => texts(family).length === 2 && texts(always).length === 1, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(texts(family)).toEqual(['You said: one', 'You said: two']);
    expect(texts(always)).toEqual(['You said: no mention needed']);
    expect(texts(elsewhere)).toEqual([]);
    expect(harness!.events.filter((event) => event.type === 'turn.started')).toHaveLength(3);
    const rows = (await call('listDeliveries', {})).deliveries;
    expect(rows.every((row) => row.chatId === `group:${family.id}` || row.chatId === `group:${always.id}`)).toBe(true);
  });

  it('quotes the message each reply answers, so a reply in a busy group shows what it answers', async () => {
    await startGateway();
    const one = fake.userSays({ from: alice, group: always, text: 'first question' });
    const two = fake.userSays({ from: alice, group: always, text: 'second question' });
    await waitUntil('both replies', () => texts(always).length === 2, 20_000);
    expect(fake.sentTo(always).map((sent) => [sent.message, sent.quote?.timestamp])).toEqual([
      ['You said: first question', one.timestamp],
      ['You said: second question', two.timestamp],
    ]);
  });

  it('sends a 10 000-character reply complete and in order, each part within 2 000 bytes and unmarked', async () => {
    await startGateway({ agentArgs: ['--chars', '10000'] });
    fake.userSays({ from: alice, text: 'long please' });
    const recorded = await harness!.waitFor('reply.recorded', undefined, 20_000);
    await harness!.waitFor('delivery.changed', (event) => event.delivery.id === recorded.obligationId && event.delivery.state === 'delivered', 60_000);
    const parts = texts(alice);
    expect(parts.length).toBeGreaterThanOrEqual(5);
    expect(parts.every((text) => Buffer.byteLength(text) <= 2000 && !text.startsWith(RESEND_MARKER))).toBe(true);
    expect(parts.join('').replace(/\s+/g, '')).toBe((longText(10000) as string).replace(/\s+/g, ''));
  }, 90_000);

  it('waits out a rate limit for the seconds signal-cli names, without spending an attempt', async () => {
    await startGateway();
    fake.rateLimitNext(1, 2);
    fake.userSays({ from: alice, text: 'slowly' });
    const recorded = await harness!.waitFor('reply.recorded', undefined, 20_000);
    await harness!.waitFor('delivery.changed', (event) => event.delivery.id === recorded.obligationId && event.delivery.state === 'delivered', 30_000);
    const sends = fake.requests.filter((request) => request.method === 'send');
    expect(sends.map((request) => request.error)).toEqual([-5, undefined]);
    expect(sends[1]!.at - sends[0]!.at).toBeGreaterThanOrEqual(1_900);
    expect(texts(alice)).toEqual(['You said: slowly']);
    expect(harness!.gateway.deliveries.ledger.getDelivery(recorded.obligationId)).toMatchObject({ state: 'delivered', attempts: 0 });
  }, 60_000);

  it('fails a reply for good, in plain words in Deliveries, to a person whose safety number changed or who left Signal', async () => {
    await startGateway({ signal: { dmPolicy: 'open' } });
    fake.distrust(alice);
    fake.userSays({ from: alice, text: 'can you answer?' });
    const recorded = await harness!.waitFor('reply.recorded', undefined, 20_000);
    const failed = await harness!.waitFor('delivery.changed', (event) => event.delivery.id === recorded.obligationId && event.delivery.state === 'failed', 20_000);
    expect(failed.delivery.lastError).toContain('safety number changed');
    const row = (await call('listDeliveries', {})).deliveries.find((entry) => entry.id === recorded.obligationId)!;
    expect(row).toMatchObject({ state: 'failed', attempts: 1, nextAttemptAt: null });
    expect(row.lastError).not.toContain(alice.number);
    expect(texts(alice)).toEqual([]);
  }, 60_000);

  it('after the daemon restarts, reconnects and answers what was written meanwhile (kept in Signal’s queue)', async () => {
    await startGateway();
    fake.userSays({ from: alice, text: 'before' });
    await waitUntil('the first reply', () => texts(alice).length === 1, 20_000);
    const port = fake.port;
    await fake.stop();
    fake.userSays({ from: alice, text: 'while away 1' });
    fake.userSays({ from: alice, text: 'while away 2' });
    await harness!.waitFor('platform.state', (event) => event.platform.name === 'signal' && event.platform.state === 'disconnected', 10_000);
    await fake.start(port);
    await waitUntil('all answered', () => texts(alice).length === 3, 30_000);
    expect(texts(alice)).toEqual(['You said: before', 'You said: while away 1', 'You said: while away 2']);
  }, 60_000);

  it('says in words how to install, link and start signal-cli when no daemon answers', async () => {
    const port = fake.port;
    await fake.stop();
    await startGateway({ connected: false, signal: { daemon: `tcp://127.0.0.1:${port}` } });
    const down = await harness!.waitFor('platform.state', (event) => event.platform.name === 'signal' && event.platform.state === 'disconnected' && !!event.platform.error, 20_000);
    expect(down.platform.error).toContain('nothing listens there');
    expect(down.platform.error).toContain('signal-cli link -n Homing');
    expect(down.platform.error).toContain('--receive-mode manual');
  });

  it('refuses an outdated signal-cli in words, and stops trying', async () => {
    fake.version = '0.11.4';
    await startGateway({ connected: false });
    const refused = await harness!.waitFor('platform.state', (event) => event.platform.name === 'signal' && !!event.platform.error?.includes('too old'), 20_000);
    expect(refused.platform.error).toContain('0.12.1 or newer');
  });

  it('with a daemon in automatic receive mode takes its pushed messages and says once that an outage loses messages', async () => {
    await fake.stop();
    fake = await new FakeSignalCli({ receiveMode: 'on-start' }).start();
    alice = fake.addPerson('alice');
    await startGateway();
    const notice = await harness!.waitFor('platform.notice', (event) => event.platform === 'signal', 10_000);
    expect(notice.text).toContain('--receive-mode manual');
    fake.userSays({ from: alice, text: 'pushed to me' });
    await waitUntil('the reply', () => texts(alice).length === 1, 20_000);
    expect(texts(alice)).toEqual(['You said: pushed to me']);
    // Taken once; told once.
    expect(harness!.events.filter((event) => event.type === 'turn.started')).toHaveLength(1);
    expect(harness!.events.filter((event) => event.type === 'platform.notice' && event.platform === 'signal')).toHaveLength(1);
  });

  it('sends a stranger a pairing code by direct message, keeps their number out of the request, and answers once approved', async () => {
    await startGateway();
    const carol = fake.addPerson('carol');
    fake.userSays({ from: carol, text: 'hi, who are you?' });
    fake.userSays({ from: carol, text: 'hello??' });
    await waitUntil('the code sent', () => texts(carol).length === 1, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(texts(carol)).toHaveLength(1);
    const request = (await call('listPairing')).requests.find((entry) => entry.platform === 'signal')!;
    expect(texts(carol)[0]).toContain(request.code);
    expect(JSON.stringify(request)).not.toContain(carol.number);
    expect(JSON.stringify(request)).not.toContain(carol.uuid);
    await call('decidePairing', { code: request.code, decision: 'approve' });
    await waitUntil('the approval notice', () => texts(carol).length === 2, 20_000);
    fake.userSays({ from: carol, text: 'now?' });
    await waitUntil('the answer', () => texts(carol).length === 3, 20_000);
    expect(texts(carol)[2]).toBe('You said: now?');
  });
});
