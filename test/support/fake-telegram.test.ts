import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FILE_LINK_VALID_MS, FakeTelegram, MAX_BOT_DOWNLOAD_BYTES, type FakeUser } from './fake-telegram';
import { waitUntil } from './wait';

/**
 * The fake Bot API checked against the recorded facts (test/fixtures/
 * telegram-bot-api.md, copied from PLATFORMS.md) on the raw wire, before any
 * test trusts it: a fake kinder than the real service hides bugs.
 */

const FACTS = readFileSync(new URL('../fixtures/telegram-bot-api.md', import.meta.url), 'utf8');
const IDS = (JSON.parse(readFileSync(new URL('../fixtures/platform-ids.json', import.meta.url), 'utf8')) as { telegram: Record<string, string[]> }).telegram;

interface Envelope {
  ok: boolean;
  result?: unknown;
  error_code?: number;
  description?: string;
  parameters?: { retry_after?: number; migrate_to_chat_id?: number };
}

describe('the fake Bot API, against the recorded facts', () => {
  let fake: FakeTelegram;
  let alice: FakeUser;
  const supergroup = Number(IDS.supergroup![0]);
  const group = Number(IDS.group![0]);

  beforeEach(async () => {
    fake = new FakeTelegram();
    await fake.start();
    alice = fake.addUser({ id: Number(IDS.private_chat![1]), first_name: 'Alice', username: 'alice' });
    fake.addChat({ id: supergroup, type: 'supergroup', title: 'Forum', is_forum: true });
    fake.addChat({ id: group, type: 'group', title: 'Group' });
  });

  afterEach(() => fake.stop());

  /** Swaps the fake for `next` (other options), with Alice in it. */
  async function restarted(next: FakeTelegram): Promise<FakeTelegram> {
    await fake.stop();
    await next.start();
    next.addUser({ id: alice.id, first_name: 'Alice', username: 'alice' });
    return next;
  }

  async function call(method: string, params: Record<string, unknown> = {}, token = fake.token): Promise<{ status: number; body: Envelope }> {
    const response = await fetch(`${fake.apiRoot}/bot${token}/${method}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(params) });
    return { status: response.status, body: (await response.json()) as Envelope };
  }

  /** The fixture's `description` strings for an error code (the backticked ones). */
  const described = (code: number) =>
    [...FACTS.matchAll(new RegExp(`\`${code} ([^\`]+)\``, 'g'))].map((match) => match[1]!.replace(/\s*…\s*/g, ' ').trim());

  it('speaks the envelope: {ok, result} or {ok:false, error_code, description}, with the HTTP status equal to the code', async () => {
    expect(FACTS).toContain('`{ok:true,result}`');
    const me = await call('getMe');
    expect(me).toMatchObject({ status: 200, body: { ok: true, result: { id: fake.bot.id, is_bot: true, username: fake.bot.username } } });
    const bad = await call('getMe', {}, '1:wrong');
    expect(bad.status).toBe(bad.body.error_code);
    expect(bad.body).toEqual({ ok: false, error_code: 401, description: 'Unauthorized' });
    const missing = await call('sendMessage', { chat_id: 42, text: 'x' });
    expect(missing).toEqual({ status: 400, body: { ok: false, error_code: 400, description: 'Bad Request: chat not found' } });
  });

  it('confirms updates by offset, caps limit at 100, and long-polls for `timeout` seconds', async () => {
    expect(FACTS.replace(/\s+/g, ' ')).toContain('`offset` (confirm = next call with a higher offset), `limit` 1–100, `timeout` seconds (long poll)');
    for (let i = 0; i < 3; i++) fake.userSays({ from: alice, text: `m${i}` });
    const first = (await call('getUpdates', { limit: 2 })).body.result as { update_id: number; message: { text: string } }[];
    expect(first.map((update) => update.message.text)).toEqual(['m0', 'm1']);
    // Not confirmed: the same updates again.
    const again = (await call('getUpdates', { offset: first[0]!.update_id })).body.result as { update_id: number }[];
    expect(again.map((update) => update.update_id)).toEqual([first[0]!.update_id, first[1]!.update_id, first[1]!.update_id + 1]);
    // A higher offset confirms everything below it.
    const rest = (await call('getUpdates', { offset: first[1]!.update_id + 1 })).body.result as { update_id: number }[];
    expect(rest).toHaveLength(1);
    expect(fake.pendingUpdates()).toHaveLength(1);
    const started = Date.now();
    const empty = await call('getUpdates', { offset: rest[0]!.update_id + 1, timeout: 1 });
    expect(empty.body).toEqual({ ok: true, result: [] });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    // A message during the long poll ends it at once.
    const polling = call('getUpdates', { offset: rest[0]!.update_id + 1, timeout: 5 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    fake.userSays({ from: alice, text: 'now' });
    expect(((await polling).body.result as unknown[]).length).toBe(1);
    // At most 100 at a time, whatever is asked.
    for (let i = 0; i < 105; i++) fake.userSays({ from: alice, text: `bulk ${i}` });
    expect(((await call('getUpdates', { limit: 500 })).body.result as unknown[]).length).toBe(100);
  });

  it('ends the first of two concurrent pollers with 409 "terminated by other getUpdates request"', async () => {
    const phrase = /`409 Conflict: terminated by other getUpdates request`/.exec(FACTS.replace(/\s+/g, ' '));
    expect(phrase).not.toBeNull();
    const first = call('getUpdates', { timeout: 5 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const second = call('getUpdates', { timeout: 1 });
    const refused = await first;
    expect(refused.status).toBe(409);
    expect(refused.body.description).toMatch(/^Conflict: terminated by other getUpdates request/);
    expect((await second).body.ok).toBe(true);
  });

  // The queue's edges below are telegram-bot-api's (Client::do_get_updates, Client::add_message_update,
  // Client::process_get_updates_query) and td's TQueue::get, not the facts file's.
  const ids = (body: Envelope) => (body.result as { update_id: number }[]).map((update) => update.update_id);

  it('slows down a poller asking for the same offset again at once: one update at most, and a wait of at least 3 s', async () => {
    for (let i = 0; i < 3; i++) fake.userSays({ from: alice, text: `m${i}` });
    expect(ids((await call('getUpdates', {})).body)).toHaveLength(3);
    expect(ids((await call('getUpdates', {})).body)).toHaveLength(1);
    const offset = fake.pendingUpdates().at(-1)!.update_id + 1;
    await call('getUpdates', { offset });
    const started = Date.now();
    expect((await call('getUpdates', { offset, timeout: 0 })).body).toEqual({ ok: true, result: [] });
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_500);
  });

  it('ignores an offset beyond the queue\'s tail (+10) and serves the queue from its head, confirming nothing', async () => {
    for (let i = 0; i < 3; i++) fake.userSays({ from: alice, text: `m${i}` });
    const [head] = fake.pendingUpdates().map((update) => update.update_id);
    const tail = head! + 3;
    expect(ids((await call('getUpdates', { offset: tail + 11 })).body)).toEqual([head, head! + 1, head! + 2]);
    expect(fake.pendingUpdates()).toHaveLength(3);
    // Up to 10 beyond the tail is still "now": everything below it is confirmed.
    expect(ids((await call('getUpdates', { offset: tail + 10 })).body)).toEqual([]);
    expect(fake.pendingUpdates()).toHaveLength(0);
    // A negative offset keeps only the last -offset updates.
    for (let i = 0; i < 3; i++) fake.userSays({ from: alice, text: `n${i}` });
    expect(ids((await call('getUpdates', { offset: -1 })).body)).toEqual([tail + 2]);
  });

  it('numbers the next update at random after a week without updates, and hands it to a poller still asking for the old offset', async () => {
    fake = await restarted(new FakeTelegram({ firstUpdateId: 700_000_000, randomUpdateId: () => 3_000_000 }));
    fake.userSays({ from: alice, text: 'before' });
    const first = ids((await call('getUpdates', {})).body)[0]!;
    expect(first).toBe(700_000_000);
    expect(ids((await call('getUpdates', { offset: first + 1 })).body)).toEqual([]);
    fake.advanceClock(6 * 24 * 3600_000);
    fake.userSays({ from: alice, text: 'within the week' });
    expect(fake.pendingUpdates().map((update) => update.update_id)).toEqual([first + 1]);
    await call('getUpdates', { offset: first + 2 });
    fake.advanceClock(7 * 24 * 3600_000);
    // A long poll at the old offset is woken by the renumbered update.
    const polling = call('getUpdates', { offset: first + 2, timeout: 5 });
    await waitUntil('the poll open', () => fake.polling);
    fake.userSays({ from: alice, text: 'after a quiet week' });
    expect(ids((await polling).body)).toEqual([3_000_000]);
    // Ids far above the old offset are served too (an offset more than 100 000 below the head is "in the past").
    fake = await restarted(new FakeTelegram({ firstUpdateId: 2_000_001, randomUpdateId: () => 900_000_000 }));
    fake.userSays({ from: alice, text: 'x' });
    await call('getUpdates', { offset: 2_000_002 });
    fake.advanceClock(8 * 24 * 3600_000);
    fake.userSays({ from: alice, text: 'y' });
    expect(ids((await call('getUpdates', { offset: 2_000_002 })).body)).toEqual([900_000_000]);
  });

  it("forgets an update 24 hours after its message's date, whether or not it was confirmed", async () => {
    fake.userSays({ from: alice, text: 'old' });
    fake.advanceClock(23 * 3600_000);
    fake.userSays({ from: alice, text: 'newer' });
    expect(fake.pendingUpdates()).toHaveLength(2);
    fake.advanceClock(3600_000 + 2_000);
    const left = (await call('getUpdates', {})).body.result as { message: { text: string } }[];
    expect(left.map((update) => update.message.text)).toEqual(['newer']);
  });

  it('refuses getUpdates while a webhook is set; deleteWebhook keeps the waiting updates unless told to drop them', async () => {
    fake.userSays({ from: alice, text: 'waiting' });
    const polling = call('getUpdates', { offset: fake.pendingUpdates()[0]!.update_id + 1, timeout: 5 });
    await waitUntil('the poll open', () => fake.polling);
    fake.setWebhook('https://old-framework.example/hook/secret');
    expect((await polling).body).toEqual({ ok: false, error_code: 409, description: 'Conflict: terminated by setWebhook request' });
    fake.userSays({ from: alice, text: 'while the webhook is set' });
    expect((await call('getUpdates', {})).body).toEqual({
      ok: false,
      error_code: 409,
      description: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
    });
    expect((await call('getWebhookInfo')).body.result).toEqual({ url: 'https://old-framework.example/hook/secret', has_custom_certificate: false, pending_update_count: 1 });
    expect((await call('deleteWebhook')).body).toEqual({ ok: true, result: true, description: 'Webhook was deleted' });
    expect((await call('deleteWebhook')).body).toEqual({ ok: true, result: true, description: 'Webhook is already deleted' });
    expect((await call('getWebhookInfo')).body.result).toMatchObject({ url: '', pending_update_count: 1 });
    const kept = (await call('getUpdates', {})).body.result as { message: { text: string } }[];
    expect(kept.map((update) => update.message.text)).toEqual(['while the webhook is set']);
    fake.setWebhook('https://old-framework.example/hook');
    expect((await call('deleteWebhook', { drop_pending_updates: true })).body.ok).toBe(true);
    expect(fake.pendingUpdates()).toHaveLength(0);
  });

  it('counts 4096 code points after entity parsing (an astral character is one), and refuses 4097', async () => {
    expect(FACTS).toContain('1–4096 **code points** after entity parsing');
    const astral = '😀'.repeat(4096);
    expect((await call('sendMessage', { chat_id: alice.id, text: astral })).body.ok).toBe(true);
    expect((await call('sendMessage', { chat_id: alice.id, text: `<b>${'x'.repeat(4096)}</b>`, parse_mode: 'HTML' })).body.ok).toBe(true);
    const long = await call('sendMessage', { chat_id: alice.id, text: astral + 'x' });
    expect(long.body).toMatchObject({ ok: false, error_code: 400, description: 'Bad Request: message is too long' });
  });

  it('gives every permanent error of the facts in their words', async () => {
    const forbidden = described(403);
    expect(forbidden).toEqual(['Forbidden: bot was blocked by the user', 'bot was kicked', 'user is deactivated']);
    fake.block(alice.id, 'blocked');
    expect((await call('sendMessage', { chat_id: alice.id, text: 'x' })).body).toEqual({ ok: false, error_code: 403, description: forbidden[0] });
    fake.block(group, 'kicked');
    expect((await call('sendMessage', { chat_id: group, text: 'x' })).body.description).toContain(forbidden[1]);
    const bob = fake.addUser({ id: Number(IDS.user![0]), first_name: 'Bob' });
    fake.block(bob.id, 'deactivated');
    expect((await call('sendMessage', { chat_id: bob.id, text: 'x' })).body.description).toContain(forbidden[2]);
    expect(described(400)).toContain('Bad Request: chat not found');
  });

  it('answers 429 with retry_after and "Too Many Requests: retry after N" while throttled', async () => {
    expect(FACTS).toContain('`429` with `parameters.retry_after` seconds and "Too Many Requests: retry after N"');
    fake.throttle(alice.id, 3);
    const limited = await call('sendMessage', { chat_id: alice.id, text: 'x' });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ ok: false, error_code: 429, description: 'Too Many Requests: retry after 3', parameters: { retry_after: 3 } });
  });

  it('refuses a migrated group with migrate_to_chat_id, and announces the migration in both chats', async () => {
    expect(FACTS).toMatch(/`400 … group chat was upgraded to a supergroup chat` with `migrate_to_chat_id`/);
    const target = -1009999999999;
    fake.migrate(group, target, alice);
    const refused = await call('sendMessage', { chat_id: group, text: 'x' });
    expect(refused.body).toEqual({
      ok: false,
      error_code: 400,
      description: 'Bad Request: group chat was upgraded to a supergroup chat',
      parameters: { migrate_to_chat_id: target },
    });
    const updates = (await call('getUpdates')).body.result as { message: Record<string, unknown> }[];
    expect(updates.map((update) => [update.message.migrate_to_chat_id, update.message.migrate_from_chat_id])).toEqual([
      [target, undefined],
      [undefined, group],
    ]);
    expect((await call('sendMessage', { chat_id: target, text: 'x' })).body.ok).toBe(true);
  });

  it('takes message_thread_id only for a forum topic: not in other chats, not the General topic (1)', async () => {
    expect(FACTS).toMatch(/echoing a\s+reply-chain thread id in a non-forum group gives `400 message thread not found`; the\s+General topic id 1 also fails/);
    const topic = fake.createTopic(supergroup, 'Garden', alice);
    expect((await call('sendMessage', { chat_id: supergroup, text: 'x', message_thread_id: topic })).body).toMatchObject({ ok: true, result: { message_thread_id: topic } });
    for (const [chat, thread] of [
      [supergroup, 1],
      [group, topic],
      [supergroup, 9999],
    ] as const) {
      expect((await call('sendMessage', { chat_id: chat, text: 'x', message_thread_id: thread })).body.description).toBe('Bad Request: message thread not found');
    }
    expect((await call('sendChatAction', { chat_id: supergroup, action: 'typing', message_thread_id: topic })).body).toEqual({ ok: true, result: true });
  });

  it("refuses markup it cannot parse with \"can't parse entities\", and parses Telegram's tags", async () => {
    expect(FACTS).toContain("`400 Bad Request: can't parse entities: …`");
    for (const html of ['<b>open', '<script>x</script>', 'a < b', 'fish & chips', '<b><i>x</b></i>', '<span>x</span>']) {
      const refused = await call('sendMessage', { chat_id: alice.id, text: html, parse_mode: 'HTML' });
      expect(refused.body.description, html).toMatch(/^Bad Request: can't parse entities: /);
    }
    const ok = await call('sendMessage', { chat_id: alice.id, text: '<b>bold</b> &lt;tag&gt; <a href="https://x.org/?a=1&amp;b=2">link</a>', parse_mode: 'HTML' });
    expect(ok.body.result).toMatchObject({
      text: 'bold <tag> link',
      entities: [
        { type: 'bold', offset: 0, length: 4 },
        { type: 'text_link', offset: 11, length: 4, url: 'https://x.org/?a=1&b=2' },
      ],
    });
  });

  it('hands messages with the fields the facts list, and only those', async () => {
    const listed = /`Message`:([\s\S]*?)\n- `sendMessage`/.exec(FACTS)![1]!;
    const fields = new Set([...listed.matchAll(/`([a-z_]+)\??`/g)].map((match) => match[1]!));
    expect([...fields]).toEqual(expect.arrayContaining(['message_id', 'message_thread_id', 'from', 'chat', 'date', 'text', 'is_topic_message', 'reply_to_message', 'is_forum']));
    const topic = fake.createTopic(supergroup, 'Garden', alice);
    fake.userSays({ from: alice, chatId: supergroup, threadId: topic, text: 'in a topic' });
    const sent = (await call('sendMessage', { chat_id: alice.id, text: 'hi' })).body.result as { message_id: number };
    fake.userSays({ from: alice, text: 'a reply', replyTo: sent.message_id });
    const updates = (await call('getUpdates')).body.result as { message: Record<string, unknown> }[];
    const [created, inTopic, reply] = updates.map((update) => update.message);
    expect(created).toHaveProperty('forum_topic_created');
    for (const message of [inTopic!, reply!]) {
      for (const key of Object.keys(message)) expect(fields, key).toContain(key);
      for (const key of Object.keys(message.chat as object)) expect(['id', 'type', 'title', 'is_forum', 'first_name', 'username'], key).toContain(key);
      for (const key of Object.keys(message.from as object)) expect(['id', 'is_bot', 'first_name', 'username'], key).toContain(key);
    }
    expect(inTopic).toMatchObject({ message_thread_id: topic, is_topic_message: true, chat: { id: supergroup, type: 'supergroup', is_forum: true } });
    expect(reply).toMatchObject({ chat: { id: alice.id, type: 'private' }, reply_to_message: { message_id: sent.message_id } });
    expect(typeof reply!.date).toBe('number');
  });
  describe('files', () => {
    const facts = () => FACTS.replace(/\s+/g, ' ');
    const download = (path: string, token = fake.token) => fetch(`${fake.apiRoot}/file/bot${token}/${path}`);
    const notFound = { ok: false, error_code: 404, description: 'Not Found' };

    it('hands a photo as several PhotoSizes, smallest first, each a file of its own, with the caption', async () => {
      expect(facts()).toContain('`photo` is an array of `PhotoSize` {`file_id`, `file_unique_id`, `file_size?`, `width`, `height`}');
      const bytes = Buffer.from('a real photo, honest');
      const { file } = fake.userSendsPhoto(alice.id, alice, bytes, { caption: 'sunset', width: 1280, height: 960 });
      const [update] = (await call('getUpdates')).body.result as { message: { photo: Record<string, unknown>[]; caption: string; text?: string } }[];
      const photo = update!.message.photo;
      expect(update!.message).toMatchObject({ caption: 'sunset' });
      expect(update!.message.text).toBeUndefined();
      expect(photo.map((size) => [size.width, size.height])).toEqual([
        [90, 68],
        [320, 240],
        [800, 600],
        [1280, 960],
      ]);
      for (const size of photo) expect(Object.keys(size)).toEqual(['file_id', 'file_unique_id', 'file_size', 'width', 'height']);
      expect(new Set(photo.map((size) => size.file_id)).size).toBe(4);
      expect(photo.at(-1)).toMatchObject({ file_id: file.fileId, file_size: bytes.length });
      expect(file.fileId).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    });

    it('hands a voice note and a document in the server\'s shapes', async () => {
      expect(facts()).toContain('`voice` {`duration`, `mime_type?`, `file_id`, `file_unique_id`, `file_size?`}; `document` {`file_name?`, `mime_type?`, `file_id`, `file_unique_id`, `file_size?`}');
      fake.userSendsVoice(alice.id, alice, Buffer.from('ogg'), { durationS: 7 });
      fake.userSendsDocument(group, alice, Buffer.from('%PDF'), { fileName: 'a.pdf', mimeType: 'application/pdf', caption: 'read it' });
      const [voice, document] = ((await call('getUpdates')).body.result as { message: Record<string, Record<string, unknown>> }[]).map((update) => update.message);
      expect(Object.keys(voice!.voice!)).toEqual(['duration', 'mime_type', 'file_id', 'file_unique_id', 'file_size']);
      expect(voice!.voice).toMatchObject({ duration: 7, mime_type: 'audio/ogg', file_size: 3 });
      expect(Object.keys(document!.document!)).toEqual(['file_name', 'mime_type', 'file_id', 'file_unique_id', 'file_size']);
      expect(document).toMatchObject({ chat: { id: group }, caption: 'read it', document: { file_name: 'a.pdf', mime_type: 'application/pdf', file_size: 4 } });
    });

    it('answers getFile with a File, and serves its path with the exact bytes for an hour from then, no longer', async () => {
      expect(facts()).toContain('`File` {`file_id`, `file_unique_id`, `file_size?`, `file_path`}');
      expect(facts()).toContain('"the link will be valid for at least 1 hour"');
      const bytes = Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 251));
      const { file } = fake.userSendsDocument(alice.id, alice, bytes, { fileName: 'data.bin' });
      const answer = await call('getFile', { file_id: file.fileId });
      expect(answer.body).toEqual({ ok: true, result: { file_id: file.fileId, file_unique_id: file.fileUniqueId, file_size: 3000, file_path: file.path } });
      expect(file.path).toMatch(/^documents\/file_\d+\.bin$/);
      const served = await download(file.path);
      expect(served.status).toBe(200);
      expect(served.headers.get('content-length')).toBe('3000');
      expect(Buffer.from(await served.arrayBuffer()).equals(bytes)).toBe(true);
      fake.advanceClock(FILE_LINK_VALID_MS + 1000);
      const expired = await download(file.path);
      expect([expired.status, await expired.json()]).toEqual([404, notFound]);
      // A new getFile makes the link good again.
      await call('getFile', { file_id: file.fileId });
      expect((await download(file.path)).status).toBe(200);
      expect(fake.downloads.map((record) => [record.fileId, record.status])).toEqual([
        [file.fileId, 200],
        [file.fileId, 404],
        [file.fileId, 200],
      ]);
    });

    it('serves no path before getFile, none under another token, none it does not know: 404 Not Found in the envelope', async () => {
      expect(facts()).toContain('`404` with `{"ok":false,"error_code":404,"description":"Not Found"}`');
      const { file } = fake.userSendsPhoto(alice.id, alice, Buffer.from('jpeg'), { width: 64, height: 64 });
      const before = await download(file.path);
      expect([before.status, await before.json()]).toEqual([404, notFound]);
      await call('getFile', { file_id: file.fileId });
      const wrongToken = await download(file.path, '1:wrong');
      expect([wrongToken.status, await wrongToken.json()]).toEqual([404, notFound]);
      expect((await download('photos/file_999.jpg')).status).toBe(404);
      expect((await download(file.path)).status).toBe(200);
      // getFile itself with a wrong token: as every method.
      expect((await call('getFile', { file_id: file.fileId }, '1:wrong')).body).toEqual({ ok: false, error_code: 401, description: 'Unauthorized' });
    });

    it('refuses getFile over 20 MB with "file is too big" (20 MB exactly is served), and an unknown or missing id in the server\'s words', async () => {
      expect(facts()).toContain('Client.h `MAX_DOWNLOAD_FILE_SIZE = 20 << 20`');
      const refusals = described(400);
      expect(refusals).toEqual(expect.arrayContaining(['Bad Request: file is too big', 'Bad Request: invalid file_id', 'Bad Request: file_id not specified']));
      const big = fake.userSendsDocument(alice.id, alice, Buffer.alloc(MAX_BOT_DOWNLOAD_BYTES + 1), { fileName: 'big.zip' }).file;
      const limit = fake.userSendsDocument(alice.id, alice, Buffer.alloc(MAX_BOT_DOWNLOAD_BYTES), { fileName: 'limit.zip' }).file;
      expect((await call('getFile', { file_id: big.fileId })).body).toEqual({ ok: false, error_code: 400, description: 'Bad Request: file is too big' });
      expect((await download(big.path)).status).toBe(404);
      expect((await call('getFile', { file_id: limit.fileId })).body).toMatchObject({ ok: true, result: { file_size: MAX_BOT_DOWNLOAD_BYTES } });
      expect((await call('getFile', { file_id: 'AgACAgIAAxkBAAInotknown' })).body).toEqual({ ok: false, error_code: 400, description: 'Bad Request: invalid file_id' });
      expect((await call('getFile', {})).body).toEqual({ ok: false, error_code: 400, description: 'Bad Request: file_id not specified' });
    });

    it('holds downloads until released, then answers them; a held request whose bot went away is recorded with status 0', async () => {
      const { file } = fake.userSendsDocument(group, alice, Buffer.from('held bytes'), {
        fileName: 'a.txt',
        caption: '@homing_test_bot look',
        captionEntities: [{ type: 'mention', offset: 0, length: 16 }],
      });
      const [update] = (await call('getUpdates')).body.result as { message: Record<string, unknown> }[];
      expect(update!.message).toMatchObject({ caption: '@homing_test_bot look', caption_entities: [{ type: 'mention', offset: 0, length: 16 }] });
      await call('getFile', { file_id: file.fileId });
      const release = fake.holdDownloads();
      const waiting = download(file.path);
      const abandoned = new AbortController();
      const second = download(file.path);
      const aborting = fetch(`${fake.apiRoot}/file/bot${fake.token}/${file.path}`, { signal: abandoned.signal }).catch(() => 'aborted');
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(fake.downloads).toEqual([]);
      abandoned.abort();
      expect(await aborting).toBe('aborted');
      await waitUntil('the abandoned download recorded', () => fake.downloads.length === 1, 5_000);
      expect(fake.downloads[0]).toMatchObject({ fileId: file.fileId, status: 0 });
      release();
      expect(Buffer.from(await (await waiting).arrayBuffer()).toString()).toBe('held bytes');
      expect((await second).status).toBe(200);
      expect(fake.downloads.map((record) => record.status)).toEqual([0, 200, 200]);
    });

    it('a deleted file: getFile says "temporarily unavailable" and its path is gone; a scripted failure answers once', async () => {
      expect(described(400)).toContain('Bad Request: wrong file_id or the file is temporarily unavailable');
      const gone = fake.userSendsVoice(alice.id, alice, Buffer.from('ogg')).file;
      const flaky = fake.userSendsVoice(alice.id, alice, Buffer.from('ogg too')).file;
      await call('getFile', { file_id: gone.fileId });
      fake.deleteFile(gone.fileId);
      expect((await call('getFile', { file_id: gone.fileId })).body).toEqual({ ok: false, error_code: 400, description: 'Bad Request: wrong file_id or the file is temporarily unavailable' });
      expect((await download(gone.path)).status).toBe(404);
      await call('getFile', { file_id: flaky.fileId });
      fake.failNextDownload(flaky.fileId, 502);
      expect((await download(flaky.path)).status).toBe(502);
      expect(Buffer.from(await (await download(flaky.path)).arrayBuffer()).toString()).toBe('ogg too');
      expect(fake.downloads.map((record) => record.status)).toEqual([404, 502, 200]);
    });
  });
});
