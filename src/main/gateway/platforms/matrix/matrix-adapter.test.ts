import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeMatrix } from '../../../../../test/support/fake-matrix';
import { waitUntil } from '../../../../../test/support/wait';
import { homingConfigSchema } from '../../homing-config';
import { silentLogger } from '../../logger';
import { FileSecretStore } from '../../secrets/secret-store';
import type { IntakeOutcome, InboundMessage } from '../adapter';
import { matrixSettings } from '.';
import { testConnection } from '../connection-test';
import { MatrixAdapter, type MatrixCredentials } from './matrix-adapter';

/**
 * The adapter alone against the fake homeserver (real HTTP): what it takes from
 * /sync when the timeline has a gap, when the pipeline cannot save, and when the
 * server answers nonsense; and Test connection.
 */
describe('the Matrix adapter against the fake homeserver', () => {
  let fake: FakeMatrix;
  let dir: string;
  let bot: string;
  let alice: string;
  let token: string;
  let adapter: MatrixAdapter | undefined;

  beforeEach(async () => {
    fake = new FakeMatrix();
    await fake.start();
    bot = fake.addUser('homing', { password: 'bot-pw', displayName: 'Homing' });
    alice = fake.addUser('alice', { displayName: 'Alice' });
    token = fake.issueToken(bot, 'DEV');
    dir = mkdtempSync(join(tmpdir(), 'homing-mx-adapter-'));
  });

  afterEach(async () => {
    await adapter?.disconnect();
    adapter = undefined;
    await fake.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  function config(extra: Record<string, unknown> = {}) {
    const parsed = homingConfigSchema.parse({ platforms: { matrix: { homeserver: fake.baseUrl, user: bot, allowFrom: [alice], pollTimeoutSeconds: 1, ...extra } } });
    return parsed.platforms.matrix!;
  }

  /** An adapter whose "pipeline" records what it is handed and answers with `outcome`. */
  function start(outcome: (message: InboundMessage) => IntakeOutcome = () => 'saved', credentials: MatrixCredentials = { accessToken: token }): InboundMessage[] {
    const taken: InboundMessage[] = [];
    const { settings } = matrixSettings(config(), { env: {}, secrets: { get: () => undefined } as never });
    adapter = new MatrixAdapter({
      config: settings,
      credentials,
      dataDir: dir,
      access: { isApproved: () => false, requestPairing: () => undefined, owedPairing: () => [], pairingTold: () => {} },
      logger: silentLogger,
      reconnectDelayMs: () => 100,
    });
    adapter.onEvent((event) => {
      if (event.type !== 'message') return;
      taken.push(event.message);
      event.ack?.(outcome(event.message));
    });
    void adapter.connect();
    return taken;
  }

  it('takes every message posted while it was away, in order and once, filling the gap from /messages', async () => {
    const room = fake.createRoom(alice, { invite: [bot], direct: true });
    let taken = start();
    await waitUntil('joined', () => fake.membership(bot, room) === 'join', 10_000);
    fake.userSays(alice, room, 'before');
    await waitUntil('the first', () => taken.length === 1, 10_000);
    await adapter!.disconnect();
    // More than the sync filter's 100 events: the sync hands a limited timeline.
    for (let i = 0; i < 150; i++) fake.userSays(alice, room, `m${i}`);
    taken = start();
    await waitUntil('all 150', () => taken.length >= 150, 20_000);
    await waitUntil('polling', () => fake.isPolling(bot), 10_000);
    expect(taken.map((message) => message.text)).toEqual(Array.from({ length: 150 }, (_, i) => `m${i}`));
    expect(fake.requests.some((request) => request.path.endsWith('/messages'))).toBe(true);
  });

  it('reads a gap again while /messages keeps failing, keeping it in the file meanwhile, and takes the room\'s messages in order once it answers', async () => {
    const room = fake.createRoom(alice, { invite: [bot], direct: true });
    let taken = start();
    await waitUntil('joined', () => fake.membership(bot, room) === 'join', 10_000);
    fake.userSays(alice, room, 'before');
    await waitUntil('the first', () => taken.length === 1, 10_000);
    await adapter!.disconnect();
    for (let i = 0; i < 150; i++) fake.userSays(alice, room, `m${i}`);
    let failures = 0;
    const heal = fake.fault((request) => (request.path.endsWith('/messages') ? (failures++, { kind: 'error', status: 504, errcode: 'M_UNKNOWN', error: 'Gateway Timeout' }) : undefined));
    taken = start();
    await waitUntil('three failed reads', () => failures >= 3, 10_000);
    // The position moved on, the gap did not: it is in the file, and nothing of the room was taken out of order.
    const saved = JSON.parse(readFileSync(join(dir, 'matrix', readdirSync(join(dir, 'matrix')).find((name) => name.startsWith('account-'))!), 'utf8')) as { gaps: { roomId: string }[] };
    expect(saved.gaps.map((gap) => gap.roomId)).toEqual([room]);
    fake.userSays(alice, room, 'during');
    await waitUntil('another failed read', () => failures >= 4, 10_000);
    expect(taken).toEqual([]);
    heal();
    await waitUntil('all 151', () => taken.length >= 151, 20_000);
    expect(taken.map((message) => message.text)).toEqual([...Array.from({ length: 150 }, (_, i) => `m${i}`), 'during']);
  });

  it('closes the gap of a room it may no longer read (403), and goes on with the others', async () => {
    const room = fake.createRoom(alice, { invite: [bot], direct: true });
    const other = fake.createRoom(alice, { invite: [bot], name: 'Other' });
    let taken = start();
    await waitUntil('joined', () => fake.membership(bot, room) === 'join' && fake.membership(bot, other) === 'join', 10_000);
    await waitUntil('polling', () => fake.isPolling(bot), 10_000);
    await adapter!.disconnect();
    for (let i = 0; i < 120; i++) fake.userSays(alice, room, `m${i}`);
    fake.fault((request) => (request.path.endsWith('/messages') ? { kind: 'error', status: 403, errcode: 'M_FORBIDDEN', error: 'User not in room' } : undefined));
    taken = start();
    await waitUntil('polling again', () => fake.isPolling(bot), 10_000);
    fake.userSays(alice, other, 'Homing: still here', { mentions: [bot] });
    await waitUntil('the other room', () => taken.some((message) => message.text === 'still here'), 10_000);
    const saved = JSON.parse(readFileSync(join(dir, 'matrix', readdirSync(join(dir, 'matrix')).find((name) => name.startsWith('account-'))!), 'utf8')) as { gaps: unknown[] };
    expect(saved.gaps).toEqual([]);
  });

  it('declares the txnId window of the homeserver it talks to: Synapse\'s day, else the shortest known (Dendrite\'s 30 minutes)', async () => {
    start();
    await waitUntil('connected', () => adapter!.state() === 'connected', 10_000);
    expect(adapter!.dedupWindowMs).toBe(24 * 60 * 60 * 1000);
    await adapter!.disconnect();
    fake.serverSoftware = 'Dendrite';
    start();
    await waitUntil('connected again', () => adapter!.state() === 'connected', 10_000);
    expect(adapter!.dedupWindowMs).toBe(30 * 60 * 1000);
    await adapter!.disconnect();
    // A proxy that passes on only the client API: the server is unknown.
    fake.serverSoftware = 'Synapse';
    fake.fault((request) => (request.path.startsWith('/_matrix/federation/') ? { kind: 'error', status: 404, errcode: 'M_UNRECOGNIZED' } : undefined));
    start();
    await waitUntil('connected a third time', () => adapter!.state() === 'connected', 10_000);
    expect(adapter!.dedupWindowMs).toBe(30 * 60 * 1000);
  });

  it('has a message handed again when the pipeline cannot save it now, and takes it once it can', async () => {
    const room = fake.createRoom(alice, { invite: [bot], direct: true });
    let refusals = 1;
    const taken = start(() => (refusals-- > 0 ? 'not-now' : 'saved'));
    await waitUntil('joined', () => fake.membership(bot, room) === 'join', 10_000);
    fake.userSays(alice, room, 'once saved');
    await waitUntil('taken twice', () => taken.length === 2, 10_000);
    fake.userSays(alice, room, 'next');
    await waitUntil('the next', () => taken.length === 3, 10_000);
    expect(taken.map((message) => message.text)).toEqual(['once saved', 'once saved', 'next']);
    expect(taken[0]!.messageRef).toBe(taken[1]!.messageRef);
  });

  it('with a password, logs in again on the same device when the homeserver ends its session', async () => {
    const room = fake.createRoom(alice, { invite: [bot], direct: true });
    const taken = start(undefined, { password: 'bot-pw' });
    await waitUntil('joined', () => fake.membership(bot, room) === 'join', 10_000);
    const devices = fake.devicesOf(bot).filter((device) => device !== 'DEV');
    expect(devices).toHaveLength(1);
    fake.revokeTokens(bot);
    await waitUntil('logged in again', () => fake.requests.filter((request) => request.path.endsWith('/login')).length === 2, 10_000);
    fake.userSays(alice, room, 'after the logout');
    await waitUntil('taken', () => taken.length === 1, 10_000);
    expect(fake.devicesOf(bot).filter((device) => device !== 'DEV')).toEqual(devices);
    expect(adapter!.state()).toBe('connected');
  });

  it('sends a part whose HTML would not fit, or that the server finds too large, as plain text under the same txnId', async () => {
    const room = fake.createRoom(alice, { invite: [bot], join: [] });
    start();
    await waitUntil('joined', () => fake.membership(bot, room) === 'join', 10_000);
    await waitUntil('connected', () => adapter!.canSend(), 10_000);
    // 16 000 ampersands: 16 000 bytes of text, 80 000 of HTML (&amp;).
    const heavy = await adapter!.send('&'.repeat(16_000), { chatId: room, threadId: null, replyTo: null, idempotencyKey: 'k-heavy' });
    expect(heavy.ok).toBe(true);
    const [plain] = fake.postedBy(bot, room);
    expect(plain!.content.formatted_body).toBeUndefined();
    expect(plain!.body).toBe('&'.repeat(16_000));

    let refused = 0;
    const stop = fake.fault((request) => (request.method === 'PUT' && (request.body as { formatted_body?: string }).formatted_body !== undefined && ++refused ? { kind: 'error', status: 413, errcode: 'M_TOO_LARGE', error: 'event too large' } : undefined));
    const sent = await adapter!.send('**bold**', { chatId: room, threadId: null, replyTo: null, idempotencyKey: 'k-bold' });
    stop();
    expect(sent.ok).toBe(true);
    expect(refused).toBe(1);
    expect(fake.postedBy(bot, room)[1]).toMatchObject({ body: 'bold', txnId: 'k-bold' });
    expect(fake.postedBy(bot, room)[1]!.content.formatted_body).toBeUndefined();
  });

  it('survives a homeserver answering nonsense, and goes on taking messages', async () => {
    const room = fake.createRoom(alice, { invite: [bot], direct: true });
    const taken = start();
    await waitUntil('joined', () => fake.membership(bot, room) === 'join', 10_000);
    await waitUntil('polling', () => fake.isPolling(bot), 10_000);
    const answers = [
      { kind: 'raw' as const, status: 200, body: '<html>not json</html>' },
      { kind: 'raw' as const, status: 200, body: JSON.stringify({ next_batch: 5, rooms: 'x' }) },
      { kind: 'raw' as const, status: 200, body: '[]' },
      { kind: 'error' as const, status: 502, errcode: 'M_UNKNOWN' },
    ];
    const stop = fake.fault((request) => (request.path.endsWith('/sync') && request.query.has('since') ? answers.shift() : undefined));
    // A fresh poll now, into the nonsense.
    await adapter!.probe();
    await waitUntil('every nonsense answer given', () => answers.length === 0, 20_000);
    stop();
    fake.userSays(alice, room, 'still there?');
    await waitUntil('the message taken after the nonsense', () => taken.length === 1, 20_000);
    expect(taken[0]!.text).toBe('still there?');
    expect(adapter!.state()).toBe('connected');
  });
  it('hands on a photo with its offer, and opens it with the token, on the authenticated route or an old server\'s', async () => {
    const room = fake.createRoom(alice, { invite: [bot], direct: true });
    const taken = start();
    await waitUntil('joined', () => fake.membership(bot, room) === 'join', 10_000);
    const photo = Buffer.from('\x89PNG\r\n\x1a\n a photo');
    fake.userSendsFile(alice, room, { msgtype: 'm.image', bytes: photo, mime: 'image/png', name: 'cat.png', caption: 'what is this?' });
    await waitUntil('the photo', () => taken.length === 1, 10_000);
    const offer = taken[0]!.media![0]!;
    expect(taken[0]).toMatchObject({ text: 'what is this?', media: [{ kind: 'image', mime: 'image/png', name: 'cat.png', size: photo.length, source: expect.stringMatching(/^mxc:\/\//) }] });
    const open = async () => {
      const body = await adapter!.openMedia(offer, { signal: new AbortController().signal, maxBytes: 1_000_000 });
      const chunks: Buffer[] = [];
      for await (const chunk of body.stream) chunks.push(Buffer.from(chunk));
      return Buffer.concat(chunks);
    };
    expect(await open()).toEqual(photo);
    fake.authenticatedMedia = false;
    expect(await open()).toEqual(photo);
    expect(fake.downloads.map((download) => [download.route, download.userId])).toEqual([['v1', bot], ['v3', bot]]);
    fake.deleteMedia(offer.source);
    fake.authenticatedMedia = true;
    await expect(open()).rejects.toMatchObject({ name: 'MediaFetchError', permanent: true });
  });

  it('opens a file before its first login (a turn resumed at start): with a password it waits for the session', async () => {
    const url = fake.upload(Buffer.from('notes'), 'text/plain', 'notes.txt');
    start(() => 'saved', { password: 'bot-pw' });
    const body = await adapter!.openMedia({ kind: 'document', source: url }, { signal: new AbortController().signal, maxBytes: 100 });
    const chunks: Buffer[] = [];
    for await (const chunk of body.stream) chunks.push(Buffer.from(chunk));
    expect(Buffer.concat(chunks).toString()).toBe('notes');
    expect(adapter!.state()).toBe('connected');
  });
});

describe('Test connection for Matrix', () => {
  let fake: FakeMatrix;
  let dir: string;
  let bot: string;

  beforeEach(async () => {
    fake = new FakeMatrix();
    await fake.start();
    bot = fake.addUser('homing', { password: 'bot-pw' });
    dir = mkdtempSync(join(tmpdir(), 'homing-mx-test-'));
  });
  afterEach(async () => {
    await fake.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const section = (extra: Record<string, unknown> = {}) => ({ homeserver: fake.baseUrl, user: bot, ...extra });
  const savedConfig = (extra: Record<string, unknown> = {}) => homingConfigSchema.parse({ platforms: { matrix: section(extra) } });

  it('asks whoami with the saved token, and says so in words when it was revoked', async () => {
    const secrets = new FileSecretStore(dir, silentLogger);
    const token = fake.issueToken(bot, 'TESTDEV');
    secrets.set('matrix.accessToken', token);
    const deps = { secrets, env: {}, savedConfig: savedConfig(), timeoutMs: 5_000 };
    expect(await testConnection('matrix', section(), deps)).toEqual({ ok: true, message: `connected to ${fake.baseUrl} as ${bot} (device TESTDEV)` });
    fake.revokeTokens(bot);
    const refused = await testConnection('matrix', section(), deps);
    expect(refused).toMatchObject({ ok: false, message: expect.stringMatching(/refused the access token .*M_UNKNOWN_TOKEN.*paste a new one/) });
    expect(refused.message).not.toContain(token);
  });

  it('with a password logs in on a device of its own and logs it out again; a wrong one is named', async () => {
    const secrets = new FileSecretStore(dir, silentLogger);
    secrets.set('matrix.password', 'bot-pw');
    const deps = { secrets, env: {}, savedConfig: savedConfig(), timeoutMs: 5_000 };
    expect(await testConnection('matrix', section(), deps)).toEqual({ ok: true, message: `connected to ${fake.baseUrl} as ${bot}` });
    expect(fake.devicesOf(bot)).toEqual([]);
    secrets.set('matrix.password', 'wrong');
    expect(await testConnection('matrix', section(), deps)).toMatchObject({ ok: false, message: expect.stringMatching(/refused the login .*check the user and password/) });
  });

  it('never sends the saved secret to another homeserver or user than it was saved for', async () => {
    const secrets = new FileSecretStore(dir, silentLogger);
    secrets.set('matrix.accessToken', fake.issueToken(bot));
    const deps = { secrets, env: {}, savedConfig: savedConfig(), timeoutMs: 5_000 };
    const elsewhere = await testConnection('matrix', section({ homeserver: 'http://127.0.0.1:9' }), deps);
    expect(elsewhere).toMatchObject({ ok: false, message: expect.stringMatching(/was not sent/) });
    expect(fake.requests).toEqual([]);
    expect(await testConnection('matrix', section({ homeserver: 'not a url' }), deps)).toMatchObject({ ok: false, message: expect.stringMatching(/^platforms\.matrix\.homeserver: /) });
  });
});
