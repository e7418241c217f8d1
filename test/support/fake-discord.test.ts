import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { FakeDiscord } from './fake-discord';

/**
 * The fake Discord against the facts it is written from
 * (test/fixtures/discord-api.md): REST status codes and error bodies, nonce
 * deduplication, rate-limit answers, and the Gateway's handshake, heartbeats,
 * resume and close codes, spoken over real HTTP and a real WebSocket.
 */

const FACTS = readFileSync(new URL('../fixtures/discord-api.md', import.meta.url), 'utf8');

interface Frame {
  op: number;
  d: unknown;
  s: number | null;
  t: string | null;
}

/** A raw Gateway client: frames in order, and how the socket closed. */
async function gateway(url: string): Promise<{ ws: WebSocket; next: () => Promise<Frame>; closed: Promise<number>; send: (frame: unknown) => void }> {
  const ws = new WebSocket(`${url}?v=10&encoding=json`);
  const queue: Frame[] = [];
  const waiting: ((frame: Frame) => void)[] = [];
  ws.on('message', (data) => {
    const frame = JSON.parse(String(data)) as Frame;
    const waiter = waiting.shift();
    if (waiter) waiter(frame);
    else queue.push(frame);
  });
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return {
    ws,
    closed,
    next: () => (queue.length > 0 ? Promise.resolve(queue.shift()!) : new Promise<Frame>((resolve) => waiting.push(resolve))),
    send: (frame) => ws.send(JSON.stringify(frame)),
  };
}

const INTENTS = (1 << 0) | (1 << 9) | (1 << 12) | (1 << 15);

describe('the fake Discord', () => {
  let fake: FakeDiscord;

  beforeEach(async () => {
    fake = new FakeDiscord({ nonceWindowMs: 60_000, messageBucket: { limit: 2, windowMs: 60_000 } });
    await fake.start();
  });

  afterEach(() => fake.stop());

  const rest = (method: string, path: string, body?: unknown, token = fake.token) =>
    fetch(`${fake.apiUrl}/v10${path}`, {
      method,
      headers: { authorization: `Bot ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  it('is written from the recorded facts', () => {
    for (const fact of ['enforce_nonce', '50007', '10003', '50013', 'retry_after', '4004', '4014', 'X-RateLimit-Bucket', 'RESUMED']) expect(FACTS).toContain(fact);
  });

  it('refuses a wrong token with 401 and names the bot and the Gateway URL for the right one', async () => {
    const refused = await rest('GET', '/users/@me', undefined, 'nope');
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ message: '401: Unauthorized', code: 0 });
    expect(await (await rest('GET', '/users/@me')).json()).toMatchObject({ id: fake.bot.id, bot: true });
    expect(await (await rest('GET', '/gateway/bot')).json()).toMatchObject({ url: fake.gatewayUrl, shards: 1, session_start_limit: { max_concurrency: 1 } });
  });

  it('deduplicates a resend with the same nonce under enforce_nonce, and not without it', async () => {
    const channel = fake.addChannel(fake.addGuild('G'), 'general');
    const send = (body: unknown) => rest('POST', `/channels/${channel.id}/messages`, body).then((res) => res.json() as Promise<{ id: string }>);
    const first = await send({ content: 'hi', nonce: 'abc', enforce_nonce: true });
    const again = await send({ content: 'hi', nonce: 'abc', enforce_nonce: true });
    expect(again.id).toBe(first.id);
    expect(fake.messages(channel.id)).toHaveLength(1);
    // Once the window has passed (forgotten), the same nonce creates a message again.
    const later = fake.addChannel(fake.addGuild('L'), 'later');
    const resend = (body: unknown) => rest('POST', `/channels/${later.id}/messages`, body).then((res) => res.json() as Promise<{ id: string }>);
    expect((await resend({ content: 'hi', nonce: 'abc', enforce_nonce: true })).id).toBe(first.id);
    fake.forgetNonces();
    expect((await resend({ content: 'hi', nonce: 'abc', enforce_nonce: true })).id).not.toBe(first.id);
    expect(fake.messages(later.id)).toHaveLength(1);
    const other = fake.addChannel(fake.addGuild('H'), 'other');
    const loose = (body: unknown) => rest('POST', `/channels/${other.id}/messages`, body).then((res) => res.json() as Promise<{ id: string; code?: number }>);
    const plain = await loose({ content: 'hi', nonce: 'abc' });
    expect(plain.id).not.toBe(first.id);
    const tooLong = await loose({ content: 'x', nonce: 'n'.repeat(26), enforce_nonce: true });
    expect(tooLong.code).toBe(50035);
  });

  it('answers the Discord errors: 403 50013 and 50007, 404 10003, 400 50035 beyond 2000 characters', async () => {
    const guild = fake.addGuild('G');
    const channel = fake.addChannel(guild, 'general');
    fake.refuseSends(channel.id, { status: 403, code: 50013, message: 'Missing Permissions' });
    const denied = await rest('POST', `/channels/${channel.id}/messages`, { content: 'hi' });
    expect(denied.status).toBe(403);
    expect(await denied.json()).toEqual({ message: 'Missing Permissions', code: 50013 });
    const unknown = await rest('POST', '/channels/123456789012345678/messages', { content: 'hi' });
    expect([unknown.status, ((await unknown.json()) as { code: number }).code]).toEqual([404, 10003]);
    const other = fake.addChannel(guild, 'other');
    const long = await rest('POST', `/channels/${other.id}/messages`, { content: 'x'.repeat(2001) });
    expect([long.status, ((await long.json()) as { code: number }).code]).toEqual([400, 50035]);
    const dm = fake.dmChannel(fake.addUser('alice'));
    fake.refuseSends(dm.id, { status: 403, code: 50007, message: 'Cannot send messages to this user' });
    const closed = await rest('POST', `/channels/${dm.id}/messages`, { content: 'hi' });
    expect([closed.status, ((await closed.json()) as { code: number }).code]).toEqual([403, 50007]);
  });

  it('pages a channel history with after=: the messages right after it, at most 100, newest first, to its end', async () => {
    const channel = fake.addChannel(fake.addGuild('G'), 'busy');
    const alice = fake.addUser('alice');
    const written = Array.from({ length: 250 }, (_, i) => fake.userSays({ from: alice, channelId: channel.id, content: `m${i}` }).id);
    const read = (query: string) => rest('GET', `/channels/${channel.id}/messages?${query}`).then((res) => res.json() as Promise<{ id: string; content: string }[]>);
    const seen: string[] = [];
    let after = '0';
    for (;;) {
      const page = await read(`after=${after}&limit=100`);
      expect(page.map((m) => m.id)).toEqual([...page].map((m) => m.id).sort((a, b) => (BigInt(b) > BigInt(a) ? 1 : -1)));
      seen.push(...page.map((m) => m.id).reverse());
      if (page.length < 100) break;
      after = page[0]!.id;
    }
    expect(seen).toEqual(written);
    // Without after: the newest, 50 by default; 1000 is read as Discord's most, 100.
    expect((await read('')).map((m) => m.content)).toEqual(Array.from({ length: 50 }, (_, i) => `m${249 - i}`));
    expect(await read('after=0&limit=1000')).toHaveLength(100);
  });

  it('fails the next history reads with a 502 when scripted, then answers again; lists no DM channels for a bot', async () => {
    const dm = fake.dmChannel(fake.addUser('alice'));
    fake.failHistoryReads(2);
    expect((await rest('GET', `/channels/${dm.id}/messages?after=0`)).status).toBe(502);
    expect((await rest('GET', `/channels/${dm.id}/messages?after=0`)).status).toBe(502);
    expect((await rest('GET', `/channels/${dm.id}/messages?after=0`)).status).toBe(200);
    expect(await (await rest('GET', '/users/@me/channels')).json()).toEqual([]);
  });

  it('rate-limits per route bucket with X-RateLimit headers and a float retry_after, and globally when scripted', async () => {
    const guild = fake.addGuild('G');
    const a = fake.addChannel(guild, 'a');
    const b = fake.addChannel(guild, 'b');
    const first = await rest('POST', `/channels/${a.id}/messages`, { content: '1' });
    expect(first.headers.get('x-ratelimit-limit')).toBe('2');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('1');
    expect(first.headers.get('x-ratelimit-bucket')).toMatch(/^[0-9a-f]+$/);
    await rest('POST', `/channels/${a.id}/messages`, { content: '2' });
    const limited = await rest('POST', `/channels/${a.id}/messages`, { content: '3' });
    expect(limited.status).toBe(429);
    const body = (await limited.json()) as { retry_after: number; global: boolean };
    expect(body.global).toBe(false);
    expect(body.retry_after).toBeGreaterThan(1);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(limited.headers.get('x-ratelimit-scope')).toBe('user');
    // Another channel is another bucket.
    expect((await rest('POST', `/channels/${b.id}/messages`, { content: 'b' })).status).toBe(200);
    fake.rateLimitNext('*', 0.5, true);
    const global = await rest('GET', '/users/@me');
    expect(global.status).toBe(429);
    expect(global.headers.get('x-ratelimit-global')).toBe('true');
    expect(((await global.json()) as { global: boolean }).global).toBe(true);
    expect(fake.messages(a.id).map((m) => m.content)).toEqual(['1', '2']);
  });

  it('records what a message pings: everything it names without allowed_mentions, nothing with parse: []', async () => {
    const channel = fake.addChannel(fake.addGuild('G'), 'general');
    const bob = fake.addUser('bob');
    await rest('POST', `/channels/${channel.id}/messages`, { content: `@everyone <@${bob.id}>` });
    await rest('POST', `/channels/${channel.id}/messages`, { content: `@everyone <@${bob.id}>`, allowed_mentions: { parse: [] } });
    expect(fake.messages(channel.id).map((m) => m.pinged)).toEqual([
      { everyone: true, users: [bob.id], roles: [] },
      { everyone: false, users: [], roles: [] },
    ]);
  });

  it('speaks the Gateway: HELLO, IDENTIFY → READY and GUILD_CREATE, heartbeat ACKs, MESSAGE_CREATE by intent', async () => {
    const guild = fake.addGuild('G');
    const channel = fake.addChannel(guild, 'general');
    const alice = fake.addUser('alice');
    const client = await gateway(fake.gatewayUrl);
    const hello = await client.next();
    expect(hello).toMatchObject({ op: 10, d: { heartbeat_interval: expect.any(Number) } });
    client.send({ op: 1, d: null });
    expect(await client.next()).toMatchObject({ op: 11 });
    client.send({ op: 2, d: { token: fake.token, intents: INTENTS, properties: { os: 'linux', browser: 'test', device: 'test' } } });
    const ready = await client.next();
    expect(ready).toMatchObject({ op: 0, t: 'READY', s: 1, d: { user: { id: fake.bot.id }, guilds: [{ id: guild, unavailable: true }], resume_gateway_url: fake.gatewayUrl } });
    expect(await client.next()).toMatchObject({ op: 0, t: 'GUILD_CREATE', d: { id: guild, channels: [{ id: channel.id }] } });
    fake.userSays({ from: alice, channelId: channel.id, content: 'hello' });
    expect(await client.next()).toMatchObject({ op: 0, t: 'MESSAGE_CREATE', s: 3, d: { channel_id: channel.id, guild_id: guild, content: 'hello', author: { id: alice.id } } });
    client.ws.close();
  });

  it('withholds message content without the MESSAGE_CONTENT intent, except for mentions of the bot', async () => {
    const channel = fake.addChannel(fake.addGuild('G'), 'general');
    const alice = fake.addUser('alice');
    const client = await gateway(fake.gatewayUrl);
    await client.next();
    client.send({ op: 2, d: { token: fake.token, intents: (1 << 0) | (1 << 9), properties: {} } });
    await client.next(); // READY
    await client.next(); // GUILD_CREATE
    fake.userSays({ from: alice, channelId: channel.id, content: 'secret' });
    fake.userSays({ from: alice, channelId: channel.id, content: 'to you', mentionBot: true });
    expect(((await client.next()).d as { content: string }).content).toBe('');
    expect(((await client.next()).d as { content: string }).content).toBe(`<@${fake.bot.id}> to you`);
    client.ws.close();
  });

  it('resumes a session: the dispatches missed while away are replayed, then RESUMED; an unknown session gets INVALID_SESSION', async () => {
    const channel = fake.addChannel(fake.addGuild('G'), 'general');
    const alice = fake.addUser('alice');
    const first = await gateway(fake.gatewayUrl);
    await first.next();
    first.send({ op: 2, d: { token: fake.token, intents: INTENTS, properties: {} } });
    const ready = (await first.next()) as Frame & { d: { session_id: string } };
    await first.next(); // GUILD_CREATE, s = 2
    fake.dropGateway();
    await first.closed;
    fake.userSays({ from: alice, channelId: channel.id, content: 'while away' });

    const second = await gateway(fake.gatewayUrl);
    await second.next();
    second.send({ op: 6, d: { token: fake.token, session_id: ready.d.session_id, seq: 2 } });
    expect(await second.next()).toMatchObject({ op: 0, t: 'MESSAGE_CREATE', s: 3, d: { content: 'while away' } });
    expect(await second.next()).toMatchObject({ op: 0, t: 'RESUMED', s: 4 });
    expect(fake.dispatched.get(fake.messages(channel.id)[0]!.id)).toHaveLength(1);
    second.ws.close();

    const third = await gateway(fake.gatewayUrl);
    await third.next();
    third.send({ op: 6, d: { token: fake.token, session_id: 'nope', seq: 1 } });
    expect(await third.next()).toMatchObject({ op: 9, d: false });
    third.ws.close();
  });

  it('closes with 4004 for a wrong token, 4014 for a privileged intent not switched on, 4003 before identifying', async () => {
    const bad = await gateway(fake.gatewayUrl);
    await bad.next();
    bad.send({ op: 2, d: { token: 'wrong', intents: INTENTS, properties: {} } });
    expect(await bad.closed).toBe(4004);

    fake.privilegedIntents = 0;
    const intents = await gateway(fake.gatewayUrl);
    await intents.next();
    intents.send({ op: 2, d: { token: fake.token, intents: INTENTS, properties: {} } });
    expect(await intents.closed).toBe(4014);

    const early = await gateway(fake.gatewayUrl);
    await early.next();
    early.send({ op: 3, d: {} });
    expect(await early.closed).toBe(4003);
  });

  describe('attachments and the CDN', () => {
    const bytes = Buffer.from('\x89PNG\r\n\x1a\n fake image');

    async function photoMessage() {
      const alice = fake.addUser('alice');
      const dm = fake.dmChannel(alice);
      const sent = fake.userSays({ from: alice, channelId: dm.id, content: 'look', files: [{ name: 'cat.png', mime: 'image/png', bytes }] });
      const payload = (await (await rest('GET', `/channels/${dm.id}/messages/${sent.id}`)).json()) as { attachments: { id: string; url: string; size: number; content_type: string; filename: string }[]; flags: number };
      return { dm, sent, payload, attachment: payload.attachments[0]! };
    }

    it('lists a person’s file as an Attachment Object with a signed link (ex, is, hm) served without a token', async () => {
      const { attachment, payload } = await photoMessage();
      expect(attachment).toMatchObject({ filename: 'cat.png', size: bytes.length, content_type: 'image/png' });
      expect(payload.flags).toBe(0);
      const url = new URL(attachment.url);
      expect(url.pathname).toMatch(/^\/attachments\/\d+\/\d+\/cat\.png$/);
      expect([...url.searchParams.keys()]).toEqual(['ex', 'is', 'hm']);
      expect(parseInt(url.searchParams.get('ex')!, 16) - parseInt(url.searchParams.get('is')!, 16)).toBe(24 * 60 * 60);
      const response = await fetch(attachment.url);
      expect([response.status, response.headers.get('content-type'), Buffer.from(await response.arrayBuffer()).equals(bytes)]).toEqual([200, 'image/png', true]);
      expect(fake.downloads).toMatchObject([{ attachmentId: attachment.id, status: 200, authorization: false }]);
    });

    it('answers 404 for an expired, tampered or unsigned link, and Get Channel Message hands a fresh one', async () => {
      const { dm, sent, attachment } = await photoMessage();
      const tampered = attachment.url.replace(/hm=[0-9a-f]/, 'hm=x');
      const unsigned = attachment.url.split('?')[0]!;
      for (const url of [tampered, unsigned]) expect((await fetch(url)).status, url).toBe(404);
      fake.advanceLinkClock(24 * 60 * 60 * 1000 + 1000);
      const expired = await fetch(attachment.url);
      expect([expired.status, await expired.text()]).toEqual([404, 'This content is no longer available.']);
      const again = (await (await rest('GET', `/channels/${dm.id}/messages/${sent.id}`)).json()) as { attachments: { url: string }[] };
      expect(again.attachments[0]!.url).not.toBe(attachment.url);
      expect((await fetch(again.attachments[0]!.url)).status).toBe(200);
      fake.deleteMessage(dm.id, sent.id);
      expect(await (await rest('GET', `/channels/${dm.id}/messages/${sent.id}`)).json()).toEqual({ message: 'Unknown Message', code: 10008 });
      expect((await fetch(again.attachments[0]!.url)).status).toBe(404);
    });

    it('marks a voice message with IS_VOICE_MESSAGE, its audio with a duration and a waveform', async () => {
      const alice = fake.addUser('alice');
      const dm = fake.dmChannel(alice);
      const sent = fake.userSendsVoice({ from: alice, channelId: dm.id, bytes: Buffer.from('OggS'), durationS: 2.5 });
      const payload = (await (await rest('GET', `/channels/${dm.id}/messages/${sent.id}`)).json()) as { content: string; flags: number; attachments: Record<string, unknown>[] };
      expect(payload).toMatchObject({ content: '', flags: 1 << 13, attachments: [{ filename: 'voice-message.ogg', content_type: 'audio/ogg', duration_secs: 2.5 }] });
      expect(typeof payload.attachments[0]!.waveform).toBe('string');
    });

    it('holds downloads unanswered until released, then serves them', async () => {
      const { attachment } = await photoMessage();
      const release = fake.holdDownloads();
      let answered = false;
      const download = fetch(attachment.url).then((response) => {
        answered = true;
        return response;
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect([answered, fake.downloads.map((record) => record.status)]).toEqual([false, [0]]);
      release();
      expect((await download).status).toBe(200);
      expect(fake.downloads.map((record) => record.status)).toEqual([0, 200]);
    });
  });
});
