import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeMatrix, MAX_EVENT_BYTES } from './fake-matrix';

/**
 * The fake homeserver checked against the recorded facts (test/fixtures/
 * matrix-client-server-api.md, copied from PLATFORMS.md) on the raw wire,
 * before any test trusts it: a fake kinder than the real service hides bugs.
 */

const FACTS = readFileSync(new URL('../fixtures/matrix-client-server-api.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');

/** A JSON answer read loosely: the tests look deep into sync bodies. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, Loose>;
}

describe('the fake homeserver, against the recorded facts', () => {
  let fake: FakeMatrix;
  let bot: string;
  let alice: string;

  beforeEach(async () => {
    fake = new FakeMatrix();
    await fake.start();
    bot = fake.addUser('homing', { password: 'bot-pw', displayName: 'Homing' });
    alice = fake.addUser('alice', { displayName: 'Alice' });
  });

  afterEach(() => fake.stop());

  async function call(method: string, path: string, options: { token?: string; body?: unknown; query?: Record<string, string> } = {}): Promise<Answer> {
    const url = new URL(`${fake.baseUrl}/_matrix/client/${path}`);
    for (const [key, value] of Object.entries(options.query ?? {})) url.searchParams.set(key, value);
    const response = await fetch(url, {
      method,
      headers: { ...(options.token ? { authorization: `Bearer ${options.token}` } : {}), ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, Loose> };
  }

  const login = (deviceId?: string) =>
    call('POST', 'v3/login', { body: { type: 'm.login.password', identifier: { type: 'm.id.user', user: 'homing' }, password: 'bot-pw', ...(deviceId ? { device_id: deviceId } : {}) } });

  it('logs in with a password and keeps a device per device_id: the same id is the same device, none makes a new one', async () => {
    expect(FACTS).toContain('login `POST /_matrix/client/v3/login` (keep the `device_id` so txnIds stay in scope across restarts)');
    const first = await login();
    expect(first).toMatchObject({ status: 200, body: { user_id: bot, device_id: expect.any(String), access_token: expect.any(String) } });
    const again = await login(first.body.device_id);
    expect(again.body.device_id).toBe(first.body.device_id);
    expect(again.body.access_token).not.toBe(first.body.access_token);
    const other = await login();
    expect(other.body.device_id).not.toBe(first.body.device_id);
    expect(fake.devicesOf(bot).sort()).toEqual([first.body.device_id, other.body.device_id].sort());
    const whoami = await call('GET', 'v3/account/whoami', { token: again.body.access_token });
    expect(whoami.body).toEqual({ user_id: bot, device_id: first.body.device_id, is_guest: false });
    const wrong = await call('POST', 'v3/login', { body: { type: 'm.login.password', identifier: { type: 'm.id.user', user: 'homing' }, password: 'nope' } });
    expect(wrong).toMatchObject({ status: 403, body: { errcode: 'M_FORBIDDEN' } });
  });

  it('syncs with since, timeout and next_batch: the initial sync gives state and the last events, a later one long-polls for news', async () => {
    expect(FACTS).toContain('`GET /_matrix/client/v3/sync?since=&timeout=<ms>`: `next_batch`; `rooms.join[roomId].timeline = {events, limited, prev_batch}`');
    const token = fake.issueToken(bot);
    const room = fake.createRoom(alice, { name: 'Garden', join: [bot] });
    for (let i = 0; i < 12; i++) fake.userSays(alice, room, `m${i}`);
    const initial = await call('GET', 'v3/sync', { token });
    const joined = initial.body.rooms.join[room];
    expect(joined.timeline.events).toHaveLength(10);
    expect(joined.timeline.limited).toBe(true);
    expect(joined.timeline.prev_batch).toMatch(/^s\d+$/);
    expect(joined.state.events.map((event: { type: string }) => event.type)).toContain('m.room.name');
    for (const event of joined.timeline.events) expect(Object.keys(event).sort()).toEqual(['content', 'event_id', 'origin_server_ts', 'sender', 'type', 'unsigned'].sort());

    const started = Date.now();
    const waiting = call('GET', 'v3/sync', { token, query: { since: initial.body.next_batch, timeout: '5000' } });
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(fake.isPolling(bot)).toBe(true);
    const said = fake.userSays(alice, room, 'news');
    const news = await waiting;
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(news.body.rooms.join[room].timeline).toMatchObject({ events: [{ event_id: said.event_id, content: { body: 'news' } }], limited: false });
    expect(news.body.next_batch).not.toBe(initial.body.next_batch);
    const quiet = await call('GET', 'v3/sync', { token, query: { since: news.body.next_batch, timeout: '200' } });
    expect(quiet.body.next_batch).toBe(news.body.next_batch);
    expect(quiet.body.rooms.join).toEqual({});
    // The filter's limit; a gap is filled forwards from /messages with the sync token.
    for (let i = 0; i < 5; i++) fake.userSays(alice, room, `g${i}`);
    const limited = await call('GET', 'v3/sync', { token, query: { since: news.body.next_batch, filter: JSON.stringify({ room: { timeline: { limit: 2 } } }) } });
    expect(limited.body.rooms.join[room].timeline).toMatchObject({ limited: true, events: [{ content: { body: 'g3' } }, { content: { body: 'g4' } }] });
    const gap = await call('GET', `v3/rooms/${encodeURIComponent(room)}/messages`, { token, query: { from: news.body.next_batch, dir: 'f', limit: '3' } });
    expect(gap.body.chunk.map((event: { content: { body: string } }) => event.content.body)).toEqual(['g0', 'g1', 'g2']);
  });

  it('answers the first event_id for a repeated txnId from the same device on the same path, posting once, even across a restart', async () => {
    expect(FACTS).toContain('same txnId on the same path from the same device returns the first `event_id`');
    const first = (await login()).body;
    const sameDevice = (await login(first.device_id)).body.access_token as string;
    const otherDevice = (await login()).body.access_token as string;
    const room = fake.createRoom(alice, { join: [bot] });
    const other = fake.createRoom(alice, { join: [bot] });
    const path = (roomId: string, txnId: string) => `v3/rooms/${encodeURIComponent(roomId)}/send/m.room.message/${txnId}`;
    const sent = await call('PUT', path(room, 'txn1'), { token: first.access_token, body: { msgtype: 'm.text', body: 'hello' } });
    expect(sent).toMatchObject({ status: 200, body: { event_id: expect.stringMatching(/^\$[A-Za-z0-9_-]{43}$/) } });
    const resent = await call('PUT', path(room, 'txn1'), { token: sameDevice, body: { msgtype: 'm.text', body: 'hello' } });
    expect(resent.body.event_id).toBe(sent.body.event_id);
    await fake.restart(50);
    const afterRestart = await call('PUT', path(room, 'txn1'), { token: first.access_token, body: { msgtype: 'm.text', body: 'hello' } });
    expect(afterRestart.body.event_id).toBe(sent.body.event_id);
    expect(fake.postedBy(bot, room)).toHaveLength(1);
    // Another device, or another room, is another transaction.
    const fromOther = await call('PUT', path(room, 'txn1'), { token: otherDevice, body: { msgtype: 'm.text', body: 'hello' } });
    expect(fromOther.body.event_id).not.toBe(sent.body.event_id);
    await call('PUT', path(other, 'txn1'), { token: first.access_token, body: { msgtype: 'm.text', body: 'hello' } });
    expect(fake.postedBy(bot)).toHaveLength(3);
  });

  it('pages /messages as Synapse does: forwards and backwards, stopping at `to`, without `end` past the last event, with the limit capped at 1 000', async () => {
    const token = fake.issueToken(bot);
    const room = fake.createRoom(alice, { join: [bot] });
    const before = fake.syncToken();
    for (let i = 0; i < 5; i++) fake.userSays(alice, room, `p${i}`);
    const texts = (answer: Answer) => (answer.body.chunk as { content: { body?: string } }[]).map((event) => event.content.body);
    const messages = (query: Record<string, string>) => call('GET', `v3/rooms/${encodeURIComponent(room)}/messages`, { token, query });
    const first = await messages({ from: before, dir: 'f', limit: '3' });
    expect(texts(first)).toEqual(['p0', 'p1', 'p2']);
    expect(first.body.start).toBe(before);
    const rest = await messages({ from: first.body.end, dir: 'f', limit: '3' });
    expect(texts(rest)).toEqual(['p3', 'p4']);
    // Past the newest event: an empty chunk and no `end` (synapse/handlers/pagination.py get_messages).
    const past = await messages({ from: rest.body.end, dir: 'f', limit: '3' });
    expect(past.body).toEqual({ chunk: [], start: rest.body.end });
    // `to` stops the page there.
    expect(texts(await messages({ from: before, to: first.body.end, dir: 'f', limit: '10' }))).toEqual(['p0', 'p1', 'p2']);
    const back = await messages({ from: fake.syncToken(), to: first.body.end, dir: 'b', limit: '10' });
    expect(texts(back)).toEqual(['p4', 'p3']);
    // Backwards to the room's creation, then nothing more: no `end` at the start of history.
    const all = await messages({ dir: 'b', limit: '5000' });
    expect(all.body.chunk.at(-1).type).toBe('m.room.create');
    expect((await messages({ from: all.body.end, dir: 'b' })).body.end).toBeUndefined();
    expect(await messages({ from: 'nonsense', dir: 'f' })).toMatchObject({ status: 400, body: { errcode: 'M_UNKNOWN', error: expect.stringContaining('Invalid stream token') } });
    expect(await call('GET', 'v3/sync', { token, query: { since: '12345' } })).toMatchObject({ status: 400, body: { errcode: 'M_UNKNOWN' } });
  });

  it('answers the next /messages once with a proxy\'s 502 page, then as before', async () => {
    const token = fake.issueToken(bot);
    const room = fake.createRoom(alice, { join: [bot] });
    fake.failNextMessages();
    const url = `${fake.baseUrl}/_matrix/client/v3/rooms/${encodeURIComponent(room)}/messages?dir=b`;
    const failed = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    expect(failed.status).toBe(502);
    expect(await failed.text()).toContain('502 Bad Gateway');
    expect((await call('GET', `v3/rooms/${encodeURIComponent(room)}/messages`, { token, query: { dir: 'b' } })).status).toBe(200);
  });

  it('forgets txnIds as Synapse does after a day: the same txnId then posts a new event', async () => {
    const token = fake.issueToken(bot, 'DEVX');
    const room = fake.createRoom(alice, { join: [bot] });
    const path = `v3/rooms/${encodeURIComponent(room)}/send/m.room.message/txn-old`;
    const sent = await call('PUT', path, { token, body: { msgtype: 'm.text', body: 'once' } });
    expect((await call('PUT', path, { token, body: { msgtype: 'm.text', body: 'once' } })).body.event_id).toBe(sent.body.event_id);
    expect(fake.txnIdWindowMs).toBe(24 * 60 * 60 * 1000);
    // The adapter knows the window from the server's name, as Synapse tells it without a token.
    const version = await fetch(`${fake.baseUrl}/_matrix/federation/v1/version`);
    expect(await version.json()).toEqual({ server: { name: 'Synapse', version: expect.any(String) } });
    fake.forgetTxnIds();
    const again = await call('PUT', path, { token, body: { msgtype: 'm.text', body: 'once' } });
    expect(again.body.event_id).not.toBe(sent.body.event_id);
    expect(fake.postedBy(bot, room).map((message) => message.body)).toEqual(['once', 'once']);
  });

  it('sets m.mentions as Element does: always present, a reply mentions the replied-to sender (not whom that event mentioned), never the sender', async () => {
    const bob = fake.addUser('bob');
    const room = fake.createRoom(alice, { join: [bot, bob] });
    expect(fake.userSays(alice, room, 'plain').content['m.mentions']).toEqual({});
    const asked = fake.userSays(alice, room, 'Homing: hi', { mentions: [bot] });
    expect(asked.content['m.mentions']).toEqual({ user_ids: [bot] });
    // Bob answers Alice's question: Element mentions Alice, not the bot she mentioned (spec v1.16).
    const answer = fake.userSays(bob, room, 'me too', { replyTo: asked.event_id });
    expect(answer.content['m.mentions']).toEqual({ user_ids: [alice] });
    // A reply to the bot mentions it; a reply to one's own message does not mention oneself.
    const said = fake.userSays(bot, room, 'You said: hi');
    expect(fake.userSays(alice, room, 'thanks', { replyTo: said.event_id }).content['m.mentions']).toEqual({ user_ids: [bot] });
    expect(fake.userSays(bob, room, 'and more', { replyTo: answer.event_id }).content['m.mentions']).toEqual({});
    // A thread message without an explicit reply mentions nobody.
    expect(fake.userSays(alice, room, 'in thread', { threadRoot: asked.event_id }).content['m.mentions']).toEqual({});
  });

  it('gives a device its own echo with unsigned.transaction_id, and nobody else', async () => {
    expect(FACTS).toContain('(`transaction_id` only on your own device\'s echoes)');
    const mine = fake.issueToken(bot);
    const otherDevice = fake.issueToken(bot);
    const aliceToken = fake.issueToken(alice);
    const room = fake.createRoom(alice, { join: [bot] });
    const before = (await call('GET', 'v3/sync', { token: mine })).body.next_batch as string;
    await call('PUT', `v3/rooms/${encodeURIComponent(room)}/send/m.room.message/abc`, { token: mine, body: { msgtype: 'm.text', body: 'hi' } });
    const echo = async (token: string) => (await call('GET', 'v3/sync', { token, query: { since: before } })).body.rooms.join[room].timeline.events.at(-1);
    expect((await echo(mine)).unsigned.transaction_id).toBe('abc');
    expect((await echo(otherDevice)).unsigned.transaction_id).toBeUndefined();
    expect((await echo(aliceToken)).unsigned.transaction_id).toBeUndefined();
  });

  it('refuses with Synapse\'s errors: M_LIMIT_EXCEEDED with retry_after_ms and Retry-After, M_TOO_LARGE, M_FORBIDDEN, M_UNKNOWN_TOKEN', async () => {
    expect(FACTS).toContain('Event ≤ 65 536 bytes as canonical JSON (`413 M_TOO_LARGE`). `429 M_LIMIT_EXCEEDED` with `Retry-After` header and/or `retry_after_ms`. `403 M_FORBIDDEN` (not in room / power level), `401 M_UNKNOWN_TOKEN`.');
    const token = fake.issueToken(bot);
    const room = fake.createRoom(alice, { join: [bot] });
    const elsewhere = fake.createRoom(alice);
    const send = (roomId: string, txnId: string, body: string) =>
      call('PUT', `v3/rooms/${encodeURIComponent(roomId)}/send/m.room.message/${txnId}`, { token, body: { msgtype: 'm.text', body } });

    fake.throttle(3_000);
    const limited = await send(room, 't1', 'x');
    expect(limited).toMatchObject({ status: 429, body: { errcode: 'M_LIMIT_EXCEEDED', retry_after_ms: expect.any(Number) } });
    expect(limited.body.retry_after_ms).toBeGreaterThan(2_000);
    expect(limited.headers.get('retry-after')).toBe('3');
    fake.throttle(0);

    const big = await send(room, 't2', 'x'.repeat(MAX_EVENT_BYTES));
    expect(big).toMatchObject({ status: 413, body: { errcode: 'M_TOO_LARGE' } });
    // The limit is on the whole event: a body a little under 64 KiB does not fit once the envelope is added.
    expect((await send(room, 't3', 'x'.repeat(MAX_EVENT_BYTES - 300))).status).toBe(413);
    // Bytes, not characters: 33 000 × é is 66 000 bytes of UTF-8.
    expect((await send(room, 't4', 'é'.repeat(33_000))).status).toBe(413);
    expect((await send(room, 't5', 'x'.repeat(60_000))).status).toBe(200);

    expect(await send(elsewhere, 't6', 'x')).toMatchObject({ status: 403, body: { errcode: 'M_FORBIDDEN' } });
    fake.mute(bot, room);
    expect(await send(room, 't7', 'x')).toMatchObject({ status: 403, body: { errcode: 'M_FORBIDDEN' } });

    fake.revokeTokens(bot);
    expect(await send(room, 't8', 'x')).toMatchObject({ status: 401, body: { errcode: 'M_UNKNOWN_TOKEN', soft_logout: false } });
    expect((await call('GET', 'v3/sync', { token })).status).toBe(401);
  });

  it('posts threads and replies as Element does, hands invites with is_direct, and joins on /join', async () => {
    expect(FACTS).toContain('threads `m.relates_to: {rel_type:"m.thread", event_id: root}`; replies `m.relates_to: {"m.in_reply_to": {event_id}}`');
    const token = fake.issueToken(bot);
    const dm = fake.createRoom(alice, { invite: [bot], direct: true, name: undefined });
    const sync = await call('GET', 'v3/sync', { token });
    const inviteState = sync.body.rooms.invite[dm].invite_state.events as { type: string; state_key: string; sender: string; content: Record<string, unknown> }[];
    expect(inviteState.find((event) => event.type === 'm.room.member' && event.state_key === bot)).toMatchObject({ sender: alice, content: { membership: 'invite', is_direct: true } });
    expect((await call('POST', `v3/join/${encodeURIComponent(dm)}`, { token, body: {} })).body).toEqual({ room_id: dm });
    expect(fake.membership(bot, dm)).toBe('join');

    const root = fake.userSays(alice, dm, 'root');
    const inThread = fake.userSays(alice, dm, 'in thread', { threadRoot: root.event_id });
    expect(inThread.content['m.relates_to']).toMatchObject({ rel_type: 'm.thread', event_id: root.event_id, is_falling_back: true });
    const reply = fake.userSays(alice, dm, 'a reply', { replyTo: root.event_id });
    expect(reply.content).toMatchObject({ body: `> <${alice}> root\n\na reply`, 'm.relates_to': { 'm.in_reply_to': { event_id: root.event_id } } });
    const unknown = await call('GET', 'v3/nothing-here', { token });
    expect(unknown).toMatchObject({ status: 404, body: { errcode: 'M_UNRECOGNIZED' } });
  });

  it('serves media at the authenticated v1 route (token required) and the old v3 route, counts downloads, and holds them when asked', async () => {
    const token = fake.issueToken(bot);
    const room = fake.createRoom(alice, { join: [bot] });
    const photo = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255]);
    const sent = fake.userSendsFile(alice, room, { msgtype: 'm.image', bytes: photo, mime: 'image/png', name: 'cat.png', caption: 'look', mentions: [bot] });
    expect(sent.content).toMatchObject({ msgtype: 'm.image', body: 'look', filename: 'cat.png', info: { mimetype: 'image/png', size: photo.length }, url: expect.stringMatching(/^mxc:\/\/homing\.test\/[A-Za-z0-9_-]{24}$/), 'm.mentions': { user_ids: [bot] } });
    const voice = fake.userSendsFile(alice, room, { msgtype: 'm.audio', bytes: Buffer.from('OggS'), mime: 'audio/ogg', name: 'voice.ogg', voice: { durationMs: 3000 } });
    expect(voice.content).toMatchObject({ body: 'Voice message', info: { duration: 3000 }, 'org.matrix.msc3245.voice': {}, 'org.matrix.msc1767.audio': { duration: 3000 } });
    const path = String(sent.content.url).slice('mxc://'.length);
    const get = (route: string, auth?: string) => fetch(`${fake.baseUrl}${route}/${path}`, { headers: auth ? { authorization: `Bearer ${auth}` } : {} });

    const missing = await get('/_matrix/client/v1/media/download');
    expect(missing.status).toBe(401);
    expect(await missing.json()).toMatchObject({ errcode: 'M_MISSING_TOKEN' });
    expect(await (await get('/_matrix/client/v1/media/download', 'syt_wrong')).json()).toMatchObject({ errcode: 'M_UNKNOWN_TOKEN' });
    const authenticated = await get('/_matrix/client/v1/media/download', token);
    expect(authenticated.status).toBe(200);
    expect(authenticated.headers.get('content-type')).toBe('image/png');
    expect(authenticated.headers.get('content-length')).toBe(String(photo.length));
    expect(Buffer.from(await authenticated.arrayBuffer())).toEqual(photo);
    const legacy = await get('/_matrix/media/v3/download');
    expect(Buffer.from(await legacy.arrayBuffer())).toEqual(photo);
    expect(fake.downloads.map((download) => [download.route, download.userId])).toEqual([['v1', bot], ['v3', undefined]]);

    const unknown = await fetch(`${fake.baseUrl}/_matrix/client/v1/media/download/homing.test/nothing`, { headers: { authorization: `Bearer ${token}` } });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ errcode: 'M_NOT_FOUND' });

    // A server older than v1.11: the v1 route is an unknown path.
    fake.authenticatedMedia = false;
    expect(await (await get('/_matrix/client/v1/media/download', token)).json()).toMatchObject({ errcode: 'M_UNRECOGNIZED' });
    fake.authenticatedMedia = true;

    const release = fake.holdDownloads();
    let answered = false;
    const held = get('/_matrix/client/v1/media/download', token).then(async (response) => {
      answered = true;
      return Buffer.from(await response.arrayBuffer());
    });
    await waitFor(() => fake.downloads.length === 4);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(answered).toBe(false);
    release();
    expect(await held).toEqual(photo);
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
