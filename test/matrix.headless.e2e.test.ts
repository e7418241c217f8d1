import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryPage, DeliveryRow, GatewayOverview, SessionPage } from '../src/shared/api';
import { RESEND_MARKER } from '../src/main/gateway/delivery/marker';
import { ENCRYPTED_NOTICE, MATRIX_CHUNK_BYTES } from '../src/main/gateway/platforms/matrix/matrix-adapter';
import { connectApi, type ApiSocket } from './support/api-socket';
import { FakeMatrix } from './support/fake-matrix';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { waitUntil } from './support/wait';

/**
 * The real headless gateway (`homing gateway`, built by `npm run build`, with
 * the adapter's real defaults: the CLI has no test tuning) on the fake
 * homeserver. One gateway for the whole file; each test uses rooms of its own
 * (the token test comes last: it logs the bot out). The agent is the chaos agent:
 * "req-N" → "req-N line 1/1 ans", "req-N long K" → K lines of up to 350 characters.
 */

const AGENT = fileURLToPath(new URL('./chaos/chaos-agent.mjs', import.meta.url));

describe('the headless gateway on Matrix (the fake homeserver)', () => {
  let fake: FakeMatrix;
  let dataDir: string;
  let gateway: RunningGateway;
  let api: ApiSocket;
  let bot: string;
  let token: string;
  const people: string[] = [];
  const deliveries = async () => (await api.call<DeliveryPage>('listDeliveries', {})).deliveries;
  const rowFor = async (request: string): Promise<DeliveryRow | undefined> => (await deliveries()).find((row) => row.preview.startsWith(request));
  const matrixStatus = async () => (await api.call<GatewayOverview>('getOverview', undefined)).platforms.find((platform) => platform.name === 'matrix')!;

  async function directChat(person: string): Promise<string> {
    const room = fake.createRoom(person, { invite: [bot], direct: true });
    await waitUntil('the bot in the direct chat', () => fake.membership(bot, room) === 'join', 15_000);
    return room;
  }

  beforeAll(async () => {
    fake = new FakeMatrix();
    await fake.start();
    bot = fake.addUser('homing', { displayName: 'Homing' });
    token = fake.issueToken(bot, 'HOMINGHEADLESS');
    for (let i = 0; i < 8; i++) people.push(fake.addUser(`person${i}`, { displayName: `Person ${i}` }));
    dataDir = mkdtempSync(join(tmpdir(), 'homing-mx-headless-'));
    writeFileSync(
      join(dataDir, 'config.json'),
      JSON.stringify({
        agent: { type: 'command', command: process.execPath, args: [AGENT, '--max-delay-ms', '0'] },
        platforms: { matrix: { homeserver: fake.baseUrl, user: bot, allowFrom: people, pollTimeoutSeconds: 5 } },
      }),
    );
    gateway = await startHeadlessGateway(['--data-dir', dataDir]);
    api = await connectApi(gateway);
    // The token as the window stores it: in the secret store.
    await api.call('setSecret', { name: 'matrix.accessToken', value: token });
    await waitUntil('the bot syncing', () => fake.isPolling(bot), 15_000);
  });

  afterAll(async () => {
    api?.close();
    await gateway?.stop();
    await fake.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers a direct message in its room, and never logs the token', async () => {
    const room = await directChat(people[0]!);
    fake.userSays(people[0]!, room, 'req-0001');
    await waitUntil('the reply', () => fake.postedBy(bot, room).length === 1, 15_000);
    expect(fake.postedBy(bot, room)[0]).toMatchObject({ body: 'req-0001 line 1/1 ans', deviceId: 'HOMINGHEADLESS' });
    expect(gateway.output()).not.toContain(token);
  });

  it('answers in a room only when addressed, as a reply, and lists the room by name', async () => {
    const room = fake.createRoom(people[1]!, { name: 'Family', invite: [bot] });
    await waitUntil('the bot in the room', () => fake.membership(bot, room) === 'join', 15_000);
    fake.userSays(people[1]!, room, 'req-0002 chatter');
    const asked = fake.userSays(people[1]!, room, 'Homing: req-0003', { mentions: [bot] });
    await waitUntil('the reply', () => fake.postedBy(bot, room).length === 1, 15_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(fake.postedBy(bot, room).map((message) => message.body)).toEqual(['req-0003 line 1/1 ans']);
    expect(fake.postedBy(bot, room)[0]!.content['m.relates_to']).toEqual({ 'm.in_reply_to': { event_id: asked.event_id } });
    expect((await matrixStatus()).rooms).toContainEqual({ id: room, name: 'Family', direct: false, encrypted: false });
  });

  it('answers a thread in the thread, as a conversation of its own', async () => {
    const room = fake.createRoom(people[2]!, { name: 'Projects', invite: [bot] });
    await waitUntil('the bot in the room', () => fake.membership(bot, room) === 'join', 15_000);
    const root = fake.userSays(people[2]!, room, 'Homing: req-0004');
    await waitUntil('the room reply', () => fake.postedBy(bot, room).length === 1, 15_000);
    fake.userSays(people[2]!, room, 'Homing: req-0005', { threadRoot: root.event_id });
    await waitUntil('the thread reply', () => fake.postedBy(bot, room).length === 2, 15_000);
    const reply = fake.postedBy(bot, room)[1]!;
    expect(reply.body).toBe('req-0005 line 1/1 ans');
    expect(reply.content['m.relates_to']).toMatchObject({ rel_type: 'm.thread', event_id: root.event_id });
    const sessions = (await api.call<SessionPage>('listSessions', {})).sessions.filter((session) => session.title === 'Projects');
    expect(sessions).toHaveLength(2);
  });

  it('sends a long reply complete and in order, each event within its byte budget, never marked', async () => {
    const room = await directChat(people[3]!);
    fake.userSays(people[3]!, room, 'req-0006 long 120');
    await waitUntil('the reply delivered', async () => (await rowFor('req-0006'))?.state === 'delivered', 30_000);
    const sent = fake.postedBy(bot, room);
    expect(sent.length).toBe((await rowFor('req-0006'))!.chunksTotal);
    expect(sent.length).toBeGreaterThanOrEqual(2);
    for (const message of sent) expect(Buffer.byteLength(message.body, 'utf8')).toBeLessThanOrEqual(MATRIX_CHUNK_BYTES);
    const lines = sent.flatMap((message) => message.body.split('\n'));
    expect(lines.some((line) => line === RESEND_MARKER)).toBe(false);
    expect(lines.map((line) => /^req-0006 line (\d+)\/120 /.exec(line)?.[1])).toEqual(Array.from({ length: 120 }, (_, i) => String(i + 1)));
  });

  it('waits out M_LIMIT_EXCEEDED and delivers without spending an attempt', async () => {
    const room = await directChat(people[4]!);
    fake.throttle(3_000, bot);
    const askedAt = Date.now();
    fake.userSays(people[4]!, room, 'req-0007');
    await waitUntil('the reply delivered', async () => (await rowFor('req-0007'))?.state === 'delivered', 20_000);
    expect(fake.postedBy(bot, room)[0]!.at - askedAt).toBeGreaterThanOrEqual(2_500);
    expect((await rowFor('req-0007'))!.attempts).toBe(0);
  });

  it('tells an encrypted room it cannot read it, and shows it as encrypted', async () => {
    const room = fake.createRoom(people[5]!, { invite: [bot], direct: true, encrypted: true });
    await waitUntil('the bot in the room', () => fake.membership(bot, room) === 'join', 15_000);
    fake.userSaysEncrypted(people[5]!, room);
    await waitUntil('the notice', () => fake.postedBy(bot, room).length === 1, 15_000);
    expect(fake.postedBy(bot, room)[0]!.body).toBe(ENCRYPTED_NOTICE);
    expect((await matrixStatus()).rooms).toContainEqual(expect.objectContaining({ id: room, encrypted: true }));
  });

  it('after the token is revoked shows the login failure, keeps the reply owed, and delivers it once a new token is stored', async () => {
    const room = await directChat(people[6]!);
    fake.userSays(people[6]!, room, 'req-0008 slow');
    await waitUntil('the turn saved', async () => (await api.call<SessionPage>('listSessions', {})).sessions.some((session) => session.title === 'Person 6'), 15_000);
    fake.revokeTokens(bot);
    await waitUntil('the login failure shown', async () => (await matrixStatus()).state === 'auth-failed', 20_000);
    expect((await matrixStatus()).error).toMatch(/refused the access token/);
    await waitUntil('the reply recorded', async () => (await rowFor('req-0008')) !== undefined, 20_000);
    expect((await rowFor('req-0008'))!.state).not.toBe('delivered');
    expect(fake.postedBy(bot, room)).toEqual([]);

    await api.call('setSecret', { name: 'matrix.accessToken', value: fake.issueToken(bot, 'HOMINGHEADLESS') });
    await waitUntil('the reply delivered', async () => (await rowFor('req-0008'))?.state === 'delivered', 30_000);
    expect(fake.postedBy(bot, room).map((message) => message.body)).toEqual(['req-0008 line 1/1 ans']);
    expect((await matrixStatus()).state).toBe('connected');
  });
});
