import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeSlack } from '../../../../../test/support/fake-slack';
import type { AdapterEvent, InboundMessage, IntakeOutcome } from '../adapter';
import { slackConfigSchema } from './config-schema';
import { SlackAdapter } from './slack-adapter';

/** The Slack adapter on @slack/socket-mode and @slack/web-api against the fake Slack (test/support/fake-slack.ts). */
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function world(options: { outcome?: () => IntakeOutcome; fake?: ConstructorParameters<typeof FakeSlack>[0]; config?: Record<string, unknown>; helloTimeoutMs?: number } = {}) {
  const fake = new FakeSlack({ retryDelaysMs: [0, 500], ackTimeoutMs: 1_000, ...options.fake });
  await fake.start();
  cleanups.push(() => fake.dispose());
  const person = fake.addUser('alice');
  const channel = fake.addChannel('general');
  const dm = fake.dmWith(person);
  const dataDir = mkdtempSync(join(tmpdir(), 'homing-slack-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const adapter = new SlackAdapter({
    config: slackConfigSchema.parse({ apiUrl: fake.apiUrl, allowFrom: [person.id], channels: { [channel.id]: {} }, ...options.config }),
    appToken: fake.appToken,
    botToken: fake.botToken,
    dataDir,
    access: { isApproved: () => false, requestPairing: () => undefined, owedPairing: () => [], pairingTold: () => {} },
    reconnectDelayMs: () => 100,
    ...(options.helloTimeoutMs ? { helloTimeoutMs: options.helloTimeoutMs } : {}),
  });
  const received: InboundMessage[] = [];
  adapter.onEvent((event: AdapterEvent) => {
    if (event.type !== 'message') return;
    const outcome = options.outcome?.() ?? 'saved';
    if (outcome === 'saved') received.push(event.message);
    event.ack?.(outcome);
  });
  cleanups.push(() => adapter.disconnect());
  await adapter.connect();
  await until(() => adapter.state() === 'connected' && fake.connectedSockets === 1);
  return { fake, adapter, person, channel, dm, received, dataDir };
}

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the Slack adapter against the fake Slack', () => {
  it('takes a direct message, acknowledges its envelope once saved, and answers in the same DM', async () => {
    const { fake, adapter, person, dm, received } = await world();
    const said = fake.userSays({ from: person, channelId: dm.id, text: 'hello & <welcome>' });
    await until(() => received.length === 1);
    expect(received[0]!.text).toBe('hello & <welcome>');
    expect(received[0]!.source).toMatchObject({ platform: 'slack', chatId: dm.id, chatType: 'direct', senderId: person.id, messageId: said.ts });
    await until(() => fake.envelopes.filter((e) => e.ts === said.ts).every((e) => fake.acked.has(e.eventId)));
    const result = await adapter.send('**hi** <!channel>', { chatId: dm.id, threadId: null, replyTo: said.ts, idempotencyKey: 'k1' });
    expect(result.ok).toBe(true);
    expect(fake.sent.at(-1)!.text).toBe('*hi* &lt;!channel&gt;');
  });

  it('answers in a listed channel only when mentioned, and takes a thread as its own conversation', async () => {
    const { fake, person, channel, received } = await world();
    fake.userSays({ from: person, channelId: channel.id, text: 'just chatting' });
    const root = fake.userSays({ from: person, channelId: channel.id, text: 'what time is it?', mentionBot: true });
    await until(() => received.length === 1);
    expect(received[0]!.text).toBe('what time is it?');
    expect(received[0]!.source).toMatchObject({ chatId: channel.id, chatType: 'channel' });
    fake.userSays({ from: person, channelId: channel.id, text: 'in the thread, no mention', threadTs: root.ts });
    fake.userSays({ from: person, channelId: channel.id, text: 'in the thread', threadTs: root.ts, mentionBot: true });
    await until(() => received.length === 2);
    expect(received[1]!.source).toMatchObject({ chatId: channel.id, chatType: 'thread', threadId: root.ts });
    // Nothing else arrives: the unaddressed messages are acknowledged, not taken.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(received.map((message) => message.text)).toEqual(['what time is it?', 'in the thread']);
  });

  it('replies in the thread it was asked in', async () => {
    const { fake, adapter, person, channel } = await world();
    const root = fake.userSays({ from: person, channelId: channel.id, text: 'hi', mentionBot: true });
    const result = await adapter.send('in the thread', { chatId: channel.id, threadId: root.ts, replyTo: root.ts, idempotencyKey: 'k' });
    expect(result.ok).toBe(true);
    expect(fake.sent.at(-1)).toMatchObject({ channel: channel.id, thread_ts: root.ts, text: 'in the thread' });
  });

  it('leaves an event it could not save unacknowledged (Slack sends it again), and takes the message once', async () => {
    let refusals = 1;
    const { fake, person, dm, received } = await world({ outcome: () => (refusals-- > 0 ? 'not-now' : 'saved') });
    const said = fake.userSays({ from: person, channelId: dm.id, text: 'once only' });
    await until(() => received.length === 1, 15_000);
    // Its re-sends (retry_attempt 1, 2) come after the save too: acknowledged, never taken again.
    await until(() => fake.envelopes.filter((e) => e.ts === said.ts).length >= 2, 15_000);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(received.map((message) => message.text)).toEqual(['once only']);
  });

  it('recognises a re-sent event by its event id after it was saved', async () => {
    const { fake, person, dm, received } = await world({ fake: { ackTimeoutMs: 200, retryDelaysMs: [0, 0] } });
    // The adapter's acknowledgements go unseen: Slack re-sends, with retry_attempt 1, 2.
    fake.loseAcks = true;
    const said = fake.userSays({ from: person, channelId: dm.id, text: 'said once' });
    await until(() => fake.envelopes.filter((e) => e.ts === said.ts).length === 3, 10_000);
    fake.loseAcks = false;
    expect(fake.envelopes.filter((e) => e.ts === said.ts).map((e) => e.retryAttempt)).toEqual([0, 1, 2]);
    expect(received.filter((message) => message.text === 'said once')).toHaveLength(1);
  });

  it('reads what was written while Slack was away, page by page, oldest first', async () => {
    const { fake, person, chatter, channel, received } = await (async () => {
      const w = await world();
      return { ...w, chatter: w.fake.addUser('chatter') };
    })();
    const port = Number(new URL(fake.apiUrl).port);
    await fake.stop();
    for (let i = 0; i < 450; i++) fake.userSays({ from: i === 300 ? person : chatter, channelId: channel.id, text: i === 300 ? 'the mention' : `chatter ${i}`, mentionBot: i === 300 });
    fake.userSays({ from: person, channelId: channel.id, text: 'the last mention', mentionBot: true });
    await fake.start(port);
    await until(() => received.length === 2, 20_000);
    expect(received.map((message) => message.text)).toEqual(['the mention', 'the last mention']);
    expect(fake.calls.filter((call) => call.method === 'conversations.history').length).toBeGreaterThanOrEqual(3);
  });

  it('moves to a new connection when Slack asks (refresh_requested), on a new single-use URL', async () => {
    const { fake, person, dm, received } = await world();
    fake.rotate();
    await until(() => fake.connectionsOpened === 2 && fake.connectedSockets === 1);
    fake.userSays({ from: person, channelId: dm.id, text: 'after the rotation' });
    await until(() => received.length === 1);
    expect(fake.calls.filter((call) => call.method === 'apps.connections.open')).toHaveLength(2);
  });

  it('waits out a 429 inside the send (no attempt spent) and says permanent errors in words', async () => {
    const { fake, adapter, channel } = await world();
    fake.rateLimitNext('chat.postMessage', 1);
    const started = Date.now();
    const result = await adapter.send('after the wait', { chatId: channel.id, threadId: null, replyTo: null, idempotencyKey: 'k' });
    expect(result.ok).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    fake.archive(channel.id);
    const archived = await adapter.send('to an archived channel', { chatId: channel.id, threadId: null, replyTo: null, idempotencyKey: 'k2' });
    expect(archived).toMatchObject({ ok: false, permanent: true, notDelivered: true });
    expect(!archived.ok && archived.error).toContain('the channel is archived');
    fake.refuseSends(channel.id, 'not_in_channel');
    const outside = await adapter.send('x', { chatId: channel.id, threadId: null, replyTo: null, idempotencyKey: 'k3' });
    expect(!outside.ok && outside.error).toContain('invite it with /invite');
  });

  it('stops with the words of a refused token', async () => {
    const fake = new FakeSlack();
    await fake.start();
    cleanups.push(() => fake.dispose());
    const dataDir = mkdtempSync(join(tmpdir(), 'homing-slack-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const adapter = new SlackAdapter({
      config: slackConfigSchema.parse({ apiUrl: fake.apiUrl }),
      appToken: 'xapp-1-wrong',
      botToken: fake.botToken,
      dataDir,
      access: { isApproved: () => false, requestPairing: () => undefined, owedPairing: () => [], pairingTold: () => {} },
    });
    const errors: string[] = [];
    adapter.onEvent((event) => event.type === 'state' && event.error && errors.push(event.error));
    cleanups.push(() => adapter.disconnect());
    await adapter.connect();
    await until(() => adapter.state() === 'auth-failed');
    expect(errors.at(-1)).toContain('Slack refused the app-level token');
    expect(errors.join(' ')).not.toContain('xapp-1-wrong');
  });

  it('after an outage reads a new thread’s replies too, each thread as its own conversation', async () => {
    const { fake, person, channel, received } = await world();
    const port = Number(new URL(fake.apiUrl).port);
    await fake.stop();
    const root = fake.userSays({ from: person, channelId: channel.id, text: 'a question', mentionBot: true });
    fake.userSays({ from: person, channelId: channel.id, text: 'more in the thread', mentionBot: true, threadTs: root.ts });
    fake.userSays({ from: person, channelId: channel.id, text: 'unaddressed in the thread', threadTs: root.ts });
    await fake.start(port);
    await until(() => received.length === 2, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(received.map((message) => [message.text, message.source.threadId])).toEqual([
      ['a question', undefined],
      ['more in the thread', root.ts],
    ]);
    expect(fake.calls.some((call) => call.method === 'conversations.replies' && call.body.ts === root.ts)).toBe(true);
  });

  it('gives up on a connection that never says hello, and opens a new one', async () => {
    const { fake, person, dm, adapter, received } = await world({ helloTimeoutMs: 700 });
    const errors: string[] = [];
    adapter.onEvent((event) => event.type === 'state' && event.error && errors.push(event.error));
    fake.sayHello = false;
    fake.dropSockets();
    await until(() => errors.some((error) => error.includes('did not say hello')), 10_000);
    fake.sayHello = true;
    await until(() => adapter.state() === 'connected' && fake.connectedSockets === 1, 20_000);
    fake.userSays({ from: person, channelId: dm.id, text: 'back' });
    await until(() => received.length === 1);
  });

  it('reads a DM someone opened while Slack was away, found by listing the bot’s DMs', async () => {
    const { fake, received } = await world({ config: { dmPolicy: 'open' } });
    const port = Number(new URL(fake.apiUrl).port);
    await fake.stop();
    const bob = fake.addUser('bob');
    const bobDm = fake.dmWith(bob);
    fake.userSays({ from: bob, channelId: bobDm.id, text: 'first from bob' });
    // Slack's re-sends of the event are over: the fake dropped it after its retries.
    await until(() => fake.dropped.length > 0, 10_000);
    await fake.start(port);
    await until(() => received.length === 1, 20_000);
    expect(received[0]).toMatchObject({ text: 'first from bob', source: { chatId: bobDm.id, chatType: 'direct' } });
    expect(fake.calls.some((call) => call.method === 'users.conversations' && call.body.types === 'im')).toBe(true);
  });
});
