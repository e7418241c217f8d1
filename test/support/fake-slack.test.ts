import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { FakeSlack } from './fake-slack';

/**
 * The fake Slack against the facts it is written from
 * (test/fixtures/slack-api.md): the Web API's answers and errors, 429s,
 * history paging, and Socket Mode's hello, envelopes, acknowledgements,
 * re-sends and single-use URLs, spoken over real HTTP and a real WebSocket.
 */

const FACTS = readFileSync(new URL('../fixtures/slack-api.md', import.meta.url), 'utf8');
const SOURCE = readFileSync(new URL('./fake-slack.ts', import.meta.url), 'utf8');

interface Envelope {
  type: string;
  envelope_id?: string;
  payload?: { event_id: string; event: { type: string; ts: string; text: string; channel: string } };
  retry_attempt?: number;
  retry_reason?: string;
}

async function socketMode(url: string): Promise<{ ws: WebSocket; next: () => Promise<Envelope> }> {
  const ws = new WebSocket(url);
  const queue: Envelope[] = [];
  const waiting: ((envelope: Envelope) => void)[] = [];
  ws.on('message', (data) => {
    const envelope = JSON.parse(String(data)) as Envelope;
    const waiter = waiting.shift();
    if (waiter) waiter(envelope);
    else queue.push(envelope);
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, next: () => (queue.length > 0 ? Promise.resolve(queue.shift()!) : new Promise((resolve) => waiting.push(resolve))) };
}

describe('the fake Slack', () => {
  let fake: FakeSlack;
  beforeEach(async () => {
    fake = new FakeSlack({ ackTimeoutMs: 300, retryDelaysMs: [0, 100] });
    await fake.start();
  });
  afterEach(() => fake.dispose());

  async function api(method: string, body: Record<string, unknown>, token: string | null = fake.botToken, json = false) {
    const response = await fetch(`${fake.apiUrl}${method}`, {
      method: 'POST',
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), 'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded' },
      body: json ? JSON.stringify(body) : new URLSearchParams(Object.entries(body).map(([k, v]) => [k, String(v)])).toString(),
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
  }

  it('cites a source for every behaviour it names', () => {
    const comments = SOURCE.split('\n').filter((line) => /^\s*(\*|\/\/)|\/\/ /.test(line)).join('\n');
    const tags = new Set([...comments.matchAll(/\[([a-zA-Z][a-zA-Z.-]+)\]/g)].map((match) => match[1]!));
    expect(tags.size).toBeGreaterThan(8);
    for (const tag of tags) expect(FACTS, `test/fixtures/slack-api.md has [${tag}]`).toContain(`[${tag}]`);
  });

  it('answers the Web API with HTTP 200 {ok:false, error} for a missing, wrong or misplaced token', async () => {
    expect((await api('auth.test', {}, null)).body).toEqual({ ok: false, error: 'not_authed' });
    expect(await api('auth.test', {}, 'xoxb-wrong')).toMatchObject({ status: 200, body: { ok: false, error: 'invalid_auth' } });
    expect((await api('auth.test', {}, fake.appToken)).body).toEqual({ ok: false, error: 'not_allowed_token_type' });
    // apps.connections.open takes the app-level token in the header only.
    expect((await api('apps.connections.open', { token: fake.appToken }, null)).body).toEqual({ ok: false, error: 'not_authed' });
    const me = (await api('auth.test', {}, fake.botToken, true)).body;
    expect(me).toMatchObject({ ok: true, user_id: fake.bot.id, bot_id: fake.bot.botId, team_id: fake.teamId });
    expect(String(me.user_id)).toMatch(/^U[A-Z0-9]{9,}$/);
  });

  it('posts a message (text cut at 40 000 characters) and names why it cannot', async () => {
    const channel = fake.addChannel('general');
    const posted = await api('chat.postMessage', { channel: channel.id, text: 'x'.repeat(41_000) });
    expect(posted.body).toMatchObject({ ok: true, channel: channel.id });
    expect(String(posted.body.ts)).toMatch(/^\d{10}\.\d{6}$/);
    expect(fake.sent[0]!.text).toHaveLength(40_000);
    expect((await api('chat.postMessage', { channel: 'C0NOSUCH00', text: 'hi' })).body).toEqual({ ok: false, error: 'channel_not_found' });
    expect((await api('chat.postMessage', { channel: channel.id, text: ' ' })).body).toEqual({ ok: false, error: 'no_text' });
    const outside = fake.addChannel('outside', { botIn: false });
    expect((await api('chat.postMessage', { channel: outside.id, text: 'hi' })).body).toEqual({ ok: false, error: 'not_in_channel' });
    fake.archive(channel.id);
    expect((await api('chat.postMessage', { channel: channel.id, text: 'hi' })).body).toEqual({ ok: false, error: 'is_archived' });
  });

  it('answers 429 with Retry-After in seconds, scripted or once a channel’s budget is spent', async () => {
    const channel = fake.addChannel('busy');
    fake.rateLimitNext('chat.postMessage', 7);
    const limited = await api('chat.postMessage', { channel: channel.id, text: 'hi' });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await api('chat.postMessage', { channel: channel.id, text: `n${i}` })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  });

  it('pages a channel’s history newest first toward older messages, thread replies apart', async () => {
    const channel = fake.addChannel('history');
    const alice = fake.addUser('alice');
    const said = Array.from({ length: 5 }, (_, i) => fake.userSays({ from: alice, channelId: channel.id, text: `m${i} <&>` }));
    fake.userSays({ from: alice, channelId: channel.id, text: 'a reply', threadTs: said[1]!.ts });
    const first = (await api('conversations.history', { channel: channel.id, oldest: said[0]!.ts, limit: 2 })).body;
    expect((first.messages as { text: string }[]).map((m) => m.text)).toEqual(['m4 &lt;&amp;&gt;', 'm3 &lt;&amp;&gt;']);
    expect(first.has_more).toBe(true);
    const cursor = (first.response_metadata as { next_cursor: string }).next_cursor;
    const second = (await api('conversations.history', { channel: channel.id, oldest: said[0]!.ts, limit: 2, cursor })).body;
    expect((second.messages as { text: string; reply_count?: number }[]).map((m) => [m.text, m.reply_count])).toEqual([
      ['m2 &lt;&amp;&gt;', undefined],
      ['m1 &lt;&amp;&gt;', 1],
    ]);
    expect(second.has_more).toBe(false);
    const replies = (await api('conversations.replies', { channel: channel.id, ts: said[1]!.ts })).body;
    expect((replies.messages as { text: string }[]).map((m) => m.text)).toEqual(['m1 &lt;&amp;&gt;', 'a reply']);
    expect((await api('conversations.replies', { channel: channel.id, ts: '1.000000' })).body).toEqual({ ok: false, error: 'thread_not_found' });
    fake.failHistoryReads(1);
    expect((await api('conversations.history', { channel: channel.id })).status).toBe(503);
  });

  it('opens Socket Mode on a single-use URL: hello, then envelopes re-sent until acknowledged', async () => {
    const alice = fake.addUser('alice');
    const dm = fake.dmWith(alice);
    const open = (await api('apps.connections.open', {}, fake.appToken)).body;
    const url = String(open.url);
    expect(url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/link\/\?ticket=/);
    const { ws, next } = await socketMode(url);
    expect(await next()).toMatchObject({ type: 'hello', connection_info: { app_id: fake.appId } });
    // The same URL again: refused.
    await expect(socketMode(url)).rejects.toThrow(/401/);
    const said = fake.userSays({ from: alice, channelId: dm.id, text: 'hi' });
    const first = await next();
    expect(first).toMatchObject({ type: 'events_api', retry_attempt: 0, payload: { event: { type: 'message', ts: said.ts, channel: dm.id } } });
    const again = await next();
    expect(again).toMatchObject({ retry_attempt: 1, retry_reason: 'timeout', payload: { event_id: first.payload!.event_id } });
    expect(again.envelope_id).not.toBe(first.envelope_id);
    ws.send(JSON.stringify({ envelope_id: again.envelope_id }));
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(fake.envelopes.filter((e) => e.eventId === first.payload!.event_id)).toHaveLength(2);
    expect(fake.acked.get(first.payload!.event_id)).toBe(1);
    ws.close();
  });

  it('drops an event after its last re-send, and asks a connection to move with disconnect', async () => {
    const alice = fake.addUser('alice');
    const dm = fake.dmWith(alice);
    const { ws, next } = await socketMode(String((await api('apps.connections.open', {}, fake.appToken)).body.url));
    await next();
    fake.userSays({ from: alice, channelId: dm.id, text: 'never acknowledged' });
    const attempts = [(await next()).retry_attempt, (await next()).retry_attempt, (await next()).retry_attempt];
    expect(attempts).toEqual([0, 1, 2]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(fake.dropped).toHaveLength(1);
    fake.rotate();
    expect(await next()).toMatchObject({ type: 'disconnect', reason: 'refresh_requested' });
    ws.close();
  });

  it('refuses a request body over 1 MB and survives garbage on the socket', async () => {
    const big = await fetch(`${fake.apiUrl}chat.postMessage`, { method: 'POST', headers: { authorization: `Bearer ${fake.botToken}` }, body: 'x'.repeat(2 * 1024 * 1024) }).catch(() => undefined);
    expect(big === undefined || big.status === 413).toBe(true);
    const { ws, next } = await socketMode(String((await api('apps.connections.open', {}, fake.appToken)).body.url));
    await next();
    ws.send('not json');
    ws.send(Buffer.from([1, 2, 3]), { binary: true });
    ws.send(JSON.stringify({ envelope_id: 'no-such-envelope' }));
    expect((await api('auth.test', {})).body.ok).toBe(true);
    ws.close();
  });

  describe('files', () => {
    const photo = Buffer.from(Array.from({ length: 3_000 }, (_, i) => (i * 31) % 256));

    async function shared() {
      const alice = fake.addUser('alice');
      const channel = fake.addChannel('general');
      const message = fake.userSays({ from: alice, channelId: channel.id, text: 'look', mentionBot: true, files: [{ name: 'plant photo.jpg', mime: 'image/jpeg', bytes: photo }] });
      const page = (await api('conversations.history', { channel: channel.id })).body as { messages: Record<string, unknown>[] };
      const file = (page.messages[0]!.files as Record<string, unknown>[])[0]!;
      return { alice, channel, message, item: page.messages[0]!, file };
    }
    const get = (url: unknown, token: string | null = fake.botToken) => fetch(String(url), { headers: token ? { authorization: `Bearer ${token}` } : {} });

    it('carries a shared file as a file_share message with Slack’s file object, in history and in its event', async () => {
      const { message, item, file } = await shared();
      expect(item).toMatchObject({ type: 'message', subtype: 'file_share', text: `<@${fake.bot.id}> look`, ts: message.ts, upload: true });
      expect(file).toMatchObject({ name: 'plant photo.jpg', title: 'plant photo.jpg', mimetype: 'image/jpeg', filetype: 'jpg', size: photo.length, mode: 'hosted', is_external: false });
      expect(String(file.id)).toMatch(/^F0[A-Z0-9]{9}$/);
      expect(file.url_private).toBe(`http://127.0.0.1:${new URL(fake.apiUrl).port}/files-pri/${fake.teamId}-${String(file.id)}/plant%20photo.jpg`);
      expect(file.url_private_download).toBe(`http://127.0.0.1:${new URL(fake.apiUrl).port}/files-pri/${fake.teamId}-${String(file.id)}/download/plant%20photo.jpg`);
      const dm = fake.dmWith(fake.addUser('bob'));
      const { ws, next } = await socketMode(String((await api('apps.connections.open', {}, fake.appToken)).body.url));
      await next();
      fake.userSays({ from: fake.addUser('carol'), channelId: dm.id, text: '', files: [{ name: 'clip.m4a', mime: 'audio/mp4', bytes: Buffer.from('clip'), audioClip: { durationMs: 2_500 } }] });
      const event = (await next()).payload!.event as unknown as Record<string, unknown>;
      expect(event).toMatchObject({ subtype: 'file_share', text: '', files: [{ name: 'clip.m4a', subtype: 'slack_audio', media_display_type: 'audio', duration_ms: 2_500, size: 4 }] });
      ws.close();
    });

    it('serves the exact bytes to the bot token only (a download for url_private_download), Slack’s sign-in page to anything else', async () => {
      const { file } = await shared();
      const download = await get(file.url_private_download);
      expect([download.status, download.headers.get('content-type'), download.headers.get('content-disposition')]).toEqual([200, 'image/jpeg', 'attachment; filename="plant photo.jpg"']);
      expect(Buffer.from(await download.arrayBuffer()).equals(photo)).toBe(true);
      const inline = await get(file.url_private);
      expect([inline.status, inline.headers.get('content-disposition')]).toEqual([200, null]);
      await inline.arrayBuffer();
      for (const token of [null, 'xoxb-wrong', fake.appToken]) {
        const page = await get(file.url_private_download, token);
        expect([page.status, page.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
        expect(await page.text()).toMatch(/^<!DOCTYPE html>.*Sign in/);
      }
      fake.filesRead = false;
      expect((await get(file.url_private_download)).headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(fake.downloads.map((download) => [download.served, download.authorization])).toEqual([
        ['file', 'bot token'],
        ['file', 'bot token'],
        ['sign-in page', 'none'],
        ['sign-in page', 'other'],
        ['sign-in page', 'other'],
        ['sign-in page', 'bot token'],
      ]);
      expect(JSON.stringify(fake.downloads)).not.toContain(fake.botToken);
    });

    it('shows a deleted file as a tombstone and answers 404 for it, and for a URL naming another file', async () => {
      const { channel, file } = await shared();
      expect((await get(String(file.url_private_download).replace(/\/[^/]+$/, '/other.jpg'))).status).toBe(404);
      fake.deleteFile(String(file.id));
      expect((await get(file.url_private_download)).status).toBe(404);
      const page = (await api('conversations.history', { channel: channel.id })).body as { messages: { files: unknown[] }[] };
      expect(page.messages[0]!.files).toEqual([{ id: file.id, mode: 'tombstone' }]);
    });

    it('holds downloads unanswered until released, logging each', async () => {
      const { file } = await shared();
      const release = fake.holdDownloads();
      let answered = false;
      const held = get(file.url_private_download).then(async (response) => {
        answered = true;
        return Buffer.from(await response.arrayBuffer());
      });
      while (fake.downloads.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect([answered, fake.downloads[0]!.status]).toEqual([false, 0]);
      release();
      expect((await held).equals(photo)).toBe(true);
      expect(fake.downloads.map((download) => download.status)).toEqual([0, 200]);
    });
  });
});
