import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiResults, MethodName } from '../src/shared/api';
import { createLineLogger } from '../src/main/gateway/logger';
import { notificationFor } from '../src/main/notifications';
import { startGatewayHarness, type GatewayHarness } from './support/gateway-harness';
import { FakeTelegram, type FakeUser } from './support/fake-telegram';
import { waitUntil } from './support/wait';

/**
 * The whole gateway in this process — pipeline, agent, ledger, sweeps — with
 * its Telegram adapter (grammY) polling the fake Bot API over real HTTP.
 */

const REPLY_AGENT = fileURLToPath(new URL('./fixtures/reply-agent.mjs', import.meta.url));
const GROUP = -1001234567890;
const FORUM = -1009876543210;

describe('the gateway on Telegram (grammY against the fake Bot API)', () => {
  let fake: FakeTelegram;
  let harness: GatewayHarness | undefined;
  let scratch: string;
  let alice: FakeUser;
  let bob: FakeUser;

  beforeEach(async () => {
    fake = new FakeTelegram();
    await fake.start();
    alice = fake.addUser({ id: 7000000001, first_name: 'Alice', username: 'alice' });
    bob = fake.addUser({ id: 123456789, first_name: 'Bob' });
    fake.addChat({ id: GROUP, type: 'supergroup', title: 'Family' });
    fake.addChat({ id: FORUM, type: 'supergroup', title: 'Projects', is_forum: true });
    scratch = mkdtempSync(join(tmpdir(), 'homing-tg-e2e-'));
  });

  afterEach(async () => {
    await harness?.close();
    harness = undefined;
    await fake.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  async function startGateway(agentArgs: string[] = [], telegram: Record<string, unknown> = {}, logLine?: (line: string) => void) {
    harness = await startGatewayHarness(
      {
        agent: { type: 'command', command: process.execPath, args: [REPLY_AGENT, ...agentArgs] },
        platforms: {
          telegram: {
            apiRoot: fake.apiRoot,
            tokenEnv: 'TELEGRAM_TOKEN',
            allowFrom: [String(alice.id)],
            groups: { [String(GROUP)]: {}, [String(FORUM)]: { allowFrom: ['*'] } },
            pollTimeoutSeconds: 2,
            ...telegram,
          },
        },
        delivery: { leaseSeconds: 2 },
      },
      {
        env: { TELEGRAM_TOKEN: fake.token },
        tuning: { telegram: { reconnectDelayMs: () => 200, typingIntervalMs: 300, conflictDelayMs: 300 } },
        ...(logLine ? { logger: createLineLogger({ level: 'debug', write: logLine }) } : {}),
      },
    );
    await harness.waitFor('platform.state', (event) => event.platform.name === 'telegram' && event.platform.state === 'connected');
    return harness;
  }

  async function call<M extends MethodName>(method: M, params?: unknown): Promise<ApiResults[M]> {
    const result = await harness!.gateway.api.dispatch(method, params);
    if (!result.ok) throw new Error(`${method}: ${result.error.message}`);
    return result.value as ApiResults[M];
  }

  const delivered = (obligationId: string) =>
    harness!.waitFor('delivery.changed', (event) => event.delivery.id === obligationId && event.delivery.state === 'delivered');

  it('answers a direct message in the same chat, threaded to it, and confirms the update only after saving it', async () => {
    await startGateway();
    const asked = fake.userSays({ from: alice, text: 'hello *there*' });
    const recorded = await harness!.waitFor('reply.recorded');
    await delivered(recorded.obligationId);

    const [reply] = fake.sentTo(alice.id);
    expect(reply).toMatchObject({ text: 'You said: hello there', replyTo: asked.message_id, threadId: undefined, parseMode: 'HTML' });
    expect(reply!.entities).toEqual([{ type: 'italic', offset: 16, length: 5 }]);
    const row = harness!.gateway.deliveries.ledger.getDelivery(recorded.obligationId)!;
    expect(row).toMatchObject({ platform: 'telegram', chatId: String(alice.id), state: 'delivered', attempts: 0 });

    const session = (await call('listSessions')).sessions.find((entry) => entry.sessionId === recorded.sessionId)!;
    expect(session.title).toContain('Alice');
    // The next poll confirmed it: Telegram forgets the update.
    await waitUntil('the update confirmed', () => fake.pendingUpdates().length === 0);
  });

  it('in a group answers only when mentioned, replied to or commanded, and never a group that is not on the list', async () => {
    await startGateway();
    const other = -1005555555555;
    fake.addChat({ id: other, type: 'supergroup', title: 'Strangers' });
    fake.userSays({ from: alice, chatId: GROUP, text: 'just chatting' });
    fake.userSays({ from: alice, chatId: other, text: '@homing_test_bot hi', entities: [{ type: 'mention', offset: 0, length: 16 }] });
    fake.userSays({ from: bob, chatId: GROUP, text: '@homing_test_bot I am not allowed', entities: [{ type: 'mention', offset: 0, length: 16 }] });
    fake.userSays({ from: alice, chatId: GROUP, text: '/ask@other_bot not for us', entities: [{ type: 'bot_command', offset: 0, length: 14 }] });
    fake.userSays({ from: alice, chatId: GROUP, text: '@homing_test_bot one', entities: [{ type: 'mention', offset: 0, length: 16 }] });
    await waitUntil('the first reply', () => fake.sentTo(GROUP).length === 1);
    const first = fake.sentTo(GROUP)[0]!;
    expect(first.text).toBe('You said: one');
    fake.userSays({ from: alice, chatId: GROUP, text: 'two', replyTo: first.messageId });
    fake.userSays({ from: alice, chatId: GROUP, text: '/three', entities: [{ type: 'bot_command', offset: 0, length: 6 }] });
    await waitUntil('three replies', () => fake.sentTo(GROUP).length === 3);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(fake.sentTo(GROUP).map((message) => message.text)).toEqual(['You said: one', 'You said: two', 'You said: /three']);
    expect(fake.sentTo(other)).toEqual([]);
    expect(fake.sentTo(bob.id)).toEqual([]);
    // The reply chain's message_thread_id (a supergroup without topics) is never echoed back.
    expect(fake.sentTo(GROUP).every((message) => message.threadId === undefined)).toBe(true);
    // The conversation is named after the group, its messages after their senders.
    const sessions = (await call('listSessions')).sessions;
    expect(sessions.map((session) => session.title)).toEqual(['Family']);
    const messages = (await call('getTranscript', { sessionId: sessions[0]!.sessionId })).messages;
    expect(messages.flatMap((message) => (message.role === 'user' ? [message.sender.name] : []))).toEqual(['Alice', 'Alice', 'Alice']);
  });

  it('keeps no raw Telegram id in a group conversation’s transcripts, session keys or log lines, and /status in the group shows none', async () => {
    const logged: string[] = [];
    await startGateway([], {}, (line) => logged.push(line));
    const topic = fake.createTopic(FORUM, 'Garden', bob);
    fake.userSays({ from: alice, chatId: GROUP, text: '@homing_test_bot hello', entities: [{ type: 'mention', offset: 0, length: 16 }] });
    await waitUntil('the group reply', () => fake.sentTo(GROUP).length === 1);
    fake.userSays({ from: alice, chatId: GROUP, text: 'and this', replyTo: fake.sentTo(GROUP)[0]!.messageId });
    fake.userSays({ from: alice, chatId: GROUP, text: '/status', entities: [{ type: 'bot_command', offset: 0, length: 7 }] });
    fake.userSays({ from: bob, chatId: FORUM, threadId: topic, text: '@homing_test_bot in the topic', entities: [{ type: 'mention', offset: 0, length: 16 }] });
    await waitUntil('every reply', () => fake.sentTo(GROUP).length === 3 && fake.sentTo(FORUM).length === 1);
    const status = fake.sentTo(GROUP)[2]!.text;
    expect(status).toMatch(/^Conversation: agent:main:telegram:group:chat_[0-9a-f]{12}\n/);
    await harness!.gateway.sessions.whenDurable((await call('listSessions')).sessions[0]!.sessionId);

    // The raw ids: the chats, the people, and every message id the platform gave (refs name their chat).
    const raw = [String(GROUP).slice(1), String(FORUM).slice(1), String(alice.id), String(bob.id)];
    const transcripts = readdirSync(join(harness!.dataDir, 'sessions'))
      .filter((name) => name.endsWith('.jsonl'))
      .map((name) => readFileSync(join(harness!.dataDir, 'sessions', name), 'utf8'));
    expect(transcripts).toHaveLength(2);
    const keys = (await call('listSessions')).sessions.map((session) => session.sessionKey);
    expect(keys).toHaveLength(2);
    for (const text of [status, ...transcripts, ...keys, ...logged]) for (const id of raw) expect(text).not.toContain(id);
    // Message refs are pseudonyms too (a raw one names its chat: tg:<chat>:<message>).
    for (const text of transcripts) expect(text).not.toMatch(/"(messageRef|replyTo)":"(?!msg_[0-9a-f]{12}")/);
    expect(logged.join('\n')).toMatch(/telegram/);
  });

  it('gives a forum topic its own conversation and answers in the same topic; the General topic is the chat itself', async () => {
    await startGateway();
    const topic = fake.createTopic(FORUM, 'Garden', bob);
    fake.userSays({ from: bob, chatId: FORUM, threadId: topic, text: '@homing_test_bot in the topic', entities: [{ type: 'mention', offset: 0, length: 16 }] });
    await waitUntil('the topic reply', () => fake.sentTo(FORUM).length === 1);
    fake.userSays({ from: bob, chatId: FORUM, text: '@homing_test_bot in general', entities: [{ type: 'mention', offset: 0, length: 16 }] });
    await waitUntil('the general reply', () => fake.sentTo(FORUM).length === 2);
    const [inTopic, inGeneral] = fake.sentTo(FORUM);
    expect(inTopic).toMatchObject({ text: 'You said: in the topic', threadId: topic });
    expect(inGeneral).toMatchObject({ text: 'You said: in general', threadId: undefined });
    const keys = harness!.events.flatMap((event) => (event.type === 'reply.recorded' ? [event.sessionId] : []));
    expect(new Set(keys).size).toBe(2);
    const rows = keys.map((sessionId) => harness!.gateway.sessions.deliveryAddress(sessionId));
    expect(rows.map((row) => row?.threadId ?? null).sort()).toEqual([null, String(topic)].sort());
  });

  it('sends a 10 000-character Markdown reply complete and in order, in chunks of at most 4 096 code points with every entity intact', async () => {
    const paragraphs: string[] = [];
    for (let i = 0; paragraphs.join('\n\n').length < 10_000; i++) {
      paragraphs.push(`Paragraph ${i} has **bold ${i}**, *italic ${i}*, \`code ${i}\` and [link ${i}](https://example.org/${i}) — 1 < 2 & 3 > 2.`);
      if (i % 10 === 5) paragraphs.push('```ts\nconst x = a < b && c > d;\n```');
    }
    const markdown = paragraphs.join('\n\n');
    const file = join(scratch, 'reply.md');
    writeFileSync(file, markdown);
    await startGateway(['--reply-file', file]);
    fake.userSays({ from: alice, text: 'long one please' });
    const recorded = await harness!.waitFor('reply.recorded');
    await delivered(recorded.obligationId);

    const sent = fake.sentTo(alice.id);
    expect(sent.length).toBeGreaterThanOrEqual(3);
    for (const message of sent) expect([...message.text].length).toBeLessThanOrEqual(4096);
    const shown = sent.map((message) => message.text).join('\n\n');
    // Every paragraph, whole and in order: nothing lost, nothing repeated.
    const numbers = [...shown.matchAll(/Paragraph (\d+) has bold \1, italic \1, code \1 and link \1 — 1 < 2 & 3 > 2\./g)].map((match) => Number(match[1]));
    expect(numbers).toEqual(paragraphs.filter((p) => p.startsWith('Paragraph')).map((_, i) => i));
    const types = sent.flatMap((message) => message.entities.map((entity) => entity.type));
    const count = (type: string) => types.filter((t) => t === type).length;
    expect({ bold: count('bold'), italic: count('italic'), code: count('code'), link: count('text_link') }).toEqual({
      bold: numbers.length,
      italic: numbers.length,
      code: numbers.length,
      link: numbers.length,
    });
    expect(count('pre')).toBe(paragraphs.filter((p) => p.startsWith('```')).length);
    for (const message of sent) {
      for (const entity of message.entities.filter((e) => e.type === 'bold')) {
        expect(message.text.slice(entity.offset, entity.offset + entity.length)).toMatch(/^bold \d+$/);
      }
    }
  });

  it('waits out a 429 with its retry_after and delivers without spending an attempt', async () => {
    await startGateway();
    fake.throttle(alice.id, 2);
    const askedAt = Date.now();
    fake.userSays({ from: alice, text: 'slowly' });
    const recorded = await harness!.waitFor('reply.recorded');
    await delivered(recorded.obligationId);
    const [reply] = fake.sentTo(alice.id);
    expect(reply!.at - askedAt).toBeGreaterThanOrEqual(1_500);
    expect(harness!.gateway.deliveries.ledger.getDelivery(recorded.obligationId)).toMatchObject({ state: 'delivered', attempts: 0 });
    const refused = fake.requests.filter((request) => request.method === 'sendMessage').length;
    expect(refused, 'one refused attempt, then the delivered one: no hammering during the wait').toBeLessThanOrEqual(3);
  });

  it('fails a reply to a person who blocked the bot for good, with the reason in plain words', async () => {
    await startGateway();
    fake.block(alice.id, 'blocked');
    fake.userSays({ from: alice, text: 'then I blocked you' });
    const recorded = await harness!.waitFor('reply.recorded');
    const failed = await harness!.waitFor('delivery.changed', (event) => event.delivery.id === recorded.obligationId && event.delivery.state === 'failed');
    expect(failed.delivery.nextAttemptAt).toBeNull();
    expect(failed.delivery.lastError).toMatch(/the person blocked the bot/);
    expect(failed.delivery.lastError).not.toContain(fake.token);
    // The tray turns that very event into a notification naming the reason.
    expect(notificationFor(failed)?.model).toMatchObject({ title: 'A reply on telegram cannot be delivered', body: expect.stringMatching(/the person blocked the bot/) });
    expect(fake.requests.filter((request) => request.method === 'sendMessage')).toHaveLength(1);
  });

  it('follows a group upgraded to a supergroup: the conversation keeps its history and the owed reply goes to the new chat', async () => {
    const oldGroup = -123456789;
    const newGroup = -1001111111111;
    fake.addChat({ id: oldGroup, type: 'group', title: 'Book club' });
    const go = join(scratch, 'go');
    writeFileSync(go, '');
    await startGateway(['--wait-for', go], { groups: { [String(oldGroup)]: { requireMention: false } } });
    fake.userSays({ from: alice, chatId: oldGroup, text: 'before' });
    await waitUntil('the first reply', () => fake.sentTo(oldGroup).length === 1);
    const first = harness!.events.find((event) => event.type === 'reply.recorded')!;

    // The upgrade happens while the agent works on a reply for the old group.
    rmSync(go);
    fake.userSays({ from: alice, chatId: oldGroup, text: 'during' });
    await harness!.waitFor('turn.started', (event) => event.sessionId === first.sessionId && harness!.events.filter((e) => e.type === 'turn.started').length === 2);
    fake.migrate(oldGroup, newGroup, alice);
    await waitUntil('the migration seen', () => fake.pendingUpdates().length === 0);
    writeFileSync(go, '');
    await waitUntil('the owed reply in the new chat', () => fake.sentTo(newGroup).length === 1);
    fake.userSays({ from: alice, chatId: newGroup, text: 'after' });
    await waitUntil('the third reply', () => fake.sentTo(newGroup).length === 2);
    expect(fake.sentTo(newGroup).map((message) => message.text)).toEqual(['You said: during', 'You said: after']);
    expect(fake.sentTo(oldGroup)).toHaveLength(1);
    const sessions = harness!.events.flatMap((event) => (event.type === 'reply.recorded' ? [event.sessionId] : []));
    expect(sessions).toEqual([first.sessionId, first.sessionId, first.sessionId]);
    expect((await call('getTranscript', { sessionId: first.sessionId })).messages.map((message) => message.text)).toEqual([
      'before',
      'You said: before',
      'during',
      'You said: during',
      'after',
      'You said: after',
    ]);
  });

  it('follows a migration it learns only from a refused send (400 with migrate_to_chat_id)', async () => {
    const oldGroup = -123456780;
    const newGroup = -1001111111112;
    fake.addChat({ id: oldGroup, type: 'group', title: 'Chess' });
    const go = join(scratch, 'go');
    await startGateway(['--wait-for', go], { groups: { [String(oldGroup)]: { requireMention: false } } });
    fake.userSays({ from: alice, chatId: oldGroup, text: 'hi' });
    await harness!.waitFor('turn.started');
    // No service messages reach the bot: only the send finds out.
    fake.migrate(oldGroup, newGroup, alice, { announce: false });
    writeFileSync(go, '');
    await waitUntil('the reply in the new chat', () => fake.sentTo(newGroup).length === 1);
    expect(fake.sentTo(newGroup)[0]!.text).toBe('You said: hi');
    const refused = fake.requests.filter((request) => request.method === 'sendMessage' && String(request.params.chat_id) === String(oldGroup));
    expect(refused).toHaveLength(1);
    const recorded = await harness!.waitFor('reply.recorded');
    await delivered(recorded.obligationId);
    expect(harness!.gateway.deliveries.ledger.getDelivery(recorded.obligationId)).toMatchObject({ state: 'delivered', attempts: 0 });
    // Later messages from the new chat continue the same conversation.
    fake.userSays({ from: alice, chatId: newGroup, text: 'again' });
    await waitUntil('the second reply', () => fake.sentTo(newGroup).length === 2);
    const sessions = harness!.events.flatMap((event) => (event.type === 'reply.recorded' ? [event.sessionId] : []));
    expect(new Set(sessions).size).toBe(1);
  });

  it('shows typing while a slow agent works, and stops when the reply is sent', async () => {
    await startGateway(['--delay-ms', '1500']);
    fake.userSays({ from: alice, text: 'think hard' });
    const recorded = await harness!.waitFor('reply.recorded');
    await delivered(recorded.obligationId);
    const typing = fake.actions.filter((action) => action.chatId === alice.id && action.action === 'typing');
    expect(typing.length).toBeGreaterThanOrEqual(3);
    const count = typing.length;
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(fake.actions.length, 'no typing after the reply').toBe(count);
    expect(typing.at(-1)!.at).toBeLessThanOrEqual(fake.sentTo(alice.id)[0]!.at);
  });

  it('stops typing when the agent fails, and the error reply is sent', async () => {
    await startGateway(['--delay-ms', '1000', '--fail']);
    fake.userSays({ from: alice, text: 'think hard, then fail' });
    const finished = await harness!.waitFor('turn.finished');
    expect(finished.outcome).toBe('agent-error');
    const recorded = await harness!.waitFor('reply.recorded');
    await delivered(recorded.obligationId);
    const typing = fake.actions.filter((action) => action.chatId === alice.id && action.action === 'typing');
    expect(typing.length).toBeGreaterThanOrEqual(2);
    const count = fake.actions.length;
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(fake.actions.length, 'no typing after the error reply').toBe(count);
    expect(fake.sentTo(alice.id)[0]!.text).toMatch(/The agent failed/);
  });

  it('pairs a new sender: one short reply with a code, nothing reaches the agent until approved; deny keeps them out', async () => {
    await startGateway();
    const carol = fake.addUser({ id: 5550001, first_name: 'Carol', username: 'carol' });
    const dave = fake.addUser({ id: 5550002, first_name: 'Dave' });
    fake.userSays({ from: carol, text: 'hi, who are you?' });
    fake.userSays({ from: carol, text: 'hello??' });
    fake.userSays({ from: dave, text: 'let me in' });
    await waitUntil('two codes sent', () => fake.sentTo(carol.id).length === 1 && fake.sentTo(dave.id).length === 1);
    await waitUntil('all confirmed', () => fake.pendingUpdates().length === 0);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Asking twice brings one code, not two; nothing reached the agent.
    expect(fake.sentTo(carol.id)).toHaveLength(1);
    expect(harness!.events.filter((event) => event.type === 'turn.started')).toHaveLength(0);
    expect((await call('listSessions')).sessions).toHaveLength(0);

    const overview = await call('listPairing');
    expect(overview.requests.map((request) => request.name).sort()).toEqual(['Carol', 'Dave']);
    const carolCode = overview.requests.find((request) => request.name === 'Carol')!;
    expect(fake.sentTo(carol.id)[0]!.text).toContain(carolCode.code);
    // The window and the CLI see a pseudonym, never the raw id.
    expect(JSON.stringify(overview)).not.toContain(String(carol.id));
    expect(carolCode.sender).toMatch(/^user_[0-9a-f]{12}$/);

    await call('decidePairing', { code: carolCode.code, decision: 'approve' });
    await waitUntil('the approval notice', () => fake.sentTo(carol.id).length === 2);
    fake.userSays({ from: carol, text: 'now?' });
    await waitUntil('the answer', () => fake.sentTo(carol.id).length === 3);
    expect(fake.sentTo(carol.id)[2]!.text).toBe('You said: now?');

    const daveCode = (await call('listPairing')).requests.find((request) => request.name === 'Dave')!;
    await call('decidePairing', { code: daveCode.code, decision: 'deny' });
    fake.userSays({ from: dave, text: 'please?' });
    await waitUntil('confirmed', () => fake.pendingUpdates().length === 0);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(fake.sentTo(dave.id)).toHaveLength(1);
    expect(harness!.events.filter((event) => event.type === 'turn.started')).toHaveLength(1);
    const after = await call('listPairing');
    expect(after.requests).toEqual([]);
    expect(after.approved.map((entry) => entry.name)).toEqual(['Carol']);
    expect(after.denied.map((entry) => entry.name)).toEqual(['Dave']);
  });

  it('turns photos, voice notes, documents and stickers into a short text for the agent, and says when a file cannot be fetched', async () => {
    await startGateway();
    // File ids Telegram does not know: getFile refuses them, and the agent is told so under the description.
    fake.userSays({ from: alice, extra: { photo: [{ file_id: 'a', width: 1, height: 1 }], caption: 'my cat' } });
    fake.userSays({ from: alice, extra: { voice: { file_id: 'v', duration: 12 } } });
    fake.userSays({ from: alice, extra: { document: { file_id: 'd', file_name: 'report.pdf' } } });
    fake.userSays({ from: alice, extra: { sticker: { file_id: 's', emoji: '👍' } } });
    await waitUntil('four replies', () => fake.sentTo(alice.id).length === 4, 20_000);
    const [photo, voice, document, sticker] = fake.sentTo(alice.id).map((message) => message.text.split('\n\n'));
    expect(photo).toEqual(['You said: [photo: my cat]', expect.stringMatching(/^\[photo: could not be fetched — Telegram refused to hand over the image \(400 .*invalid file_id/)]);
    expect(voice).toEqual(['You said: [voice note, 12 s]', expect.stringMatching(/^\[voice note, 12 s: could not be fetched — /)]);
    expect(document).toEqual(['You said: [document: report.pdf]', expect.stringMatching(/^\[document “report\.pdf”: could not be fetched — /)]);
    expect(sticker).toEqual(['You said: [sticker 👍]']);
  });

  it('names another poller of the same token in words (409) and keeps polling once it is gone', async () => {
    await startGateway([], {});
    // A second program polls with the same token.
    const intruder = async () => {
      await fetch(`${fake.apiRoot}/bot${fake.token}/getUpdates`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ timeout: 1 }) }).catch(() => undefined);
    };
    await waitUntil('the bot polling', () => fake.polling);
    await intruder();
    const degraded = await harness!.waitFor('platform.state', (event) => event.platform.name === 'telegram' && event.platform.state === 'degraded');
    expect(degraded.platform.error).toMatch(/another program is reading this bot's messages/);
    expect(degraded.platform.error).toMatch(/Conflict: terminated by other getUpdates request/);
    await harness!.waitForNext('platform.state', (event) => event.platform.name === 'telegram' && event.platform.state === 'connected');
    fake.userSays({ from: alice, text: 'still there?' });
    await waitUntil('the answer', () => fake.sentTo(alice.id).length === 1);
  });

  it('survives a hostile Bot API (garbage, nulls, updates it cannot confirm, a huge body) without crashing or spinning', async () => {
    await startGateway();
    await waitUntil('the bot polling', () => fake.polling);
    const bodies = [
      'not json at all',
      '{"ok":true,"result":null}',
      '{"ok":true,"result":[{"update_id":"x"},{"nope":1},null,7]}',
      JSON.stringify({ ok: true, result: [{ update_id: 1, message: { message_id: 'x', chat: { id: 'y' } } }] }),
      `{"ok":true,"result":["${'x'.repeat(9 * 1024 * 1024)}"]}`,
      '{"ok":false}',
    ];
    for (const body of bodies) {
      const polls = () => fake.requests.filter((request) => request.method === 'getUpdates').length;
      const before = polls();
      const stop = fake.fault((method) => (method === 'getUpdates' ? { kind: 'raw', status: 200, body } : undefined));
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      stop();
      expect(polls() - before, `polls while the server answered ${body.slice(0, 40)}`).toBeLessThanOrEqual(8);
    }
    fake.userSays({ from: alice, text: 'still alive?' });
    await waitUntil('the answer', () => fake.sentTo(alice.id).length === 1, 15_000);
    expect(harness!.gateway.getStatus().state).toBe('running');
  });

  it("falls back to plain text for a chunk whose formatting Telegram refuses (can't parse entities)", async () => {
    await startGateway();
    let refused = 0;
    fake.fault((method, params) =>
      method === 'sendMessage' && params.parse_mode === 'HTML' && refused++ === 0
        ? { kind: 'error', code: 400, description: "Bad Request: can't parse entities: Unsupported start tag \"x\" at byte offset 3" }
        : undefined,
    );
    fake.userSays({ from: alice, text: '**bold** and `code`' });
    const recorded = await harness!.waitFor('reply.recorded');
    await delivered(recorded.obligationId);
    const [reply] = fake.sentTo(alice.id);
    expect(reply).toMatchObject({ text: 'You said: bold and code', parseMode: undefined, entities: [] });
    expect(harness!.gateway.deliveries.ledger.getDelivery(recorded.obligationId)).toMatchObject({ state: 'delivered', attempts: 0 });
  });
});

