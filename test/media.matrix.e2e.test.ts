import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { silentWav } from '../src/main/gateway/media/transcribe';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectApi, userTurns, type ApiSocket } from './support/api-socket';
import { FakeMatrix } from './support/fake-matrix';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { waitUntil } from './support/wait';

/**
 * Photos and files from Matrix reaching the agent, through the real headless
 * gateway (`npm run build` first) on the fake homeserver: the bytes the person
 * uploaded are the bytes the agent reads (test/fixtures/reply-agent.mjs names
 * each file it is given with its hash), a file over the limit is never
 * downloaded, and a file whose message was saved but not fetched when the
 * gateway was killed is fetched and answered once after the restart.
 */

const REPLY_AGENT = fileURLToPath(new URL('./fixtures/reply-agent.mjs', import.meta.url));
/** A speech "engine" that prints one transcript for any audio (config `speech`, type command). */
const SPEECH = fileURLToPath(new URL('./window-fixtures/speech-hello.mjs', import.meta.url));
const PDF = readFileSync(fileURLToPath(new URL('./fixtures/media/hello.pdf', import.meta.url)));
const TOKEN_ENV = 'MATRIX_TOKEN';

/** A small JPEG-signed file, different each time (its hash tells the answers apart). */
function testPhoto(seed: number): Buffer {
  return Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]), Buffer.from('JFIF\0'), Buffer.alloc(4_000, seed), Buffer.from(String(Date.now())), Buffer.from([0xff, 0xd9])]);
}

/** The reply agent's line for a file it was given: what Homing fetched, hashed. */
function fileLine(kind: string, mime: string, bytes: Buffer): string {
  return `[file ${kind} ${mime} ${bytes.length} sha256:${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}]`;
}

describe('Matrix media reaching the agent (headless gateway, fake homeserver)', () => {
  let fake: FakeMatrix;
  let bot: string;
  let alice: string;
  let token: string;
  let dataDir: string;
  const gateways: RunningGateway[] = [];
  const sockets: ApiSocket[] = [];

  beforeAll(async () => {
    fake = new FakeMatrix();
    await fake.start();
    bot = fake.addUser('homing', { displayName: 'Homing' });
    alice = fake.addUser('alice', { displayName: 'Alice' });
    token = fake.issueToken(bot, 'HOMINGMEDIA');
  });

  afterAll(async () => {
    await fake.stop();
  });

  afterEach(async (context) => {
    if (context.task.result?.state === 'fail') for (const gateway of gateways) console.error(gateway.output().slice(-6_000));
    for (const socket of sockets.splice(0)) socket.close();
    for (const gateway of gateways.splice(0)) await gateway.kill();
    rmSync(dataDir, { recursive: true, force: true });
  });

  function configure(media: Record<string, unknown> = {}): void {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-media-matrix-'));
    writeFileSync(
      join(dataDir, 'config.json'),
      JSON.stringify({
        agent: { type: 'command', command: process.execPath, args: [REPLY_AGENT] },
        platforms: { matrix: { homeserver: fake.baseUrl, user: bot, accessTokenEnv: TOKEN_ENV, allowFrom: [alice], pollTimeoutSeconds: 2 } },
        speech: { type: 'command', command: process.execPath, args: [SPEECH, '{file}'] },
        media,
      }),
    );
  }

  async function start(): Promise<{ gateway: RunningGateway; api: ApiSocket }> {
    const gateway = await startHeadlessGateway(['--data-dir', dataDir], { [TOKEN_ENV]: token });
    gateways.push(gateway);
    const api = await connectApi(gateway);
    sockets.push(api);
    await waitUntil('the bot syncing', () => fake.isPolling(bot), 30_000);
    return { gateway, api };
  }

  async function directChat(): Promise<string> {
    const room = fake.createRoom(alice, { invite: [bot], direct: true });
    await waitUntil('the bot in the direct chat', () => fake.membership(bot, room) === 'join', 15_000);
    return room;
  }

  const replies = (room: string) => fake.postedBy(bot, room).map((message) => message.body);

  it('hands a photo to the agent as the bytes Alice uploaded, fetched once on the authenticated route', async () => {
    configure();
    const { gateway } = await start();
    const room = await directChat();
    const downloadsBefore = fake.downloads.length;
    const photo = testPhoto(1);
    fake.userSendsFile(alice, room, { msgtype: 'm.image', bytes: photo, mime: 'image/jpeg', name: 'plant.jpg', caption: 'what is this plant?' });
    await waitUntil('the answer', () => replies(room).length > 0, 30_000);
    const [answer] = replies(room);
    expect(answer).toContain('You said: what is this plant?');
    expect(answer).toContain(fileLine('image', 'image/jpeg', photo));
    expect(fake.downloads.slice(downloadsBefore).map((download) => [download.route, download.userId])).toEqual([['v1', bot]]);
    expect(gateway.output()).not.toContain(token);
  }, 90_000);

  it('gives the agent a voice message’s transcript and a PDF’s text', async () => {
    configure();
    await start();
    const room = await directChat();
    const wav = silentWav(0.5);
    fake.userSendsFile(alice, room, { msgtype: 'm.audio', bytes: wav, mime: 'audio/wav', name: 'Voice message.wav', voice: { durationMs: 3_000 } });
    await waitUntil('the answer to the voice message', () => replies(room).length > 0, 30_000);
    expect(replies(room)[0]).toContain('[transcript of the voice note, 3 s]: hello from the walk');
    expect(replies(room)[0]).toContain(fileLine('voice', 'audio/wav', wav));
    fake.userSendsFile(alice, room, { msgtype: 'm.file', bytes: PDF, mime: 'application/pdf', name: 'report.pdf', caption: 'summarise this' });
    await waitUntil('the answer to the PDF', () => replies(room).length > 1, 30_000);
    expect(replies(room)[1]).toContain('[text of the document “report.pdf”]:');
    expect(replies(room)[1]).toContain('The quick brown fox jumps over the lazy dog.');
  }, 90_000);

  it('tells the agent a file declared over the limit is too large, and never downloads it', async () => {
    configure({ maxFileMB: 1 });
    const downloadsBefore = fake.downloads.length;
    const requestsBefore = fake.requests.length;
    await start();
    const room = await directChat();
    const big = Buffer.alloc(2_000_000, 7);
    fake.userSendsFile(alice, room, { msgtype: 'm.file', bytes: big, mime: 'application/octet-stream', name: 'big.bin' });
    await waitUntil('the answer', () => replies(room).length > 0, 30_000);
    const [answer] = replies(room);
    expect(answer).toMatch(/too large/);
    expect(answer).not.toContain('[file ');
    expect(fake.downloads.length).toBe(downloadsBefore);
    expect(fake.requests.slice(requestsBefore).filter((request) => request.path.includes('/download/'))).toEqual([]);
  }, 90_000);

  it('answers a photo saved but not fetched when the gateway was killed, once, after a restart', async () => {
    configure();
    const first = await start();
    const room = await directChat();
    const photo = testPhoto(3);
    const downloadsBefore = fake.downloads.length;
    const release = fake.holdDownloads();
    try {
      fake.userSendsFile(alice, room, { msgtype: 'm.image', bytes: photo, mime: 'image/jpeg', name: 'plant.jpg', caption: 'saved, not fetched, then killed' });
      await waitUntil('the message saved', async () => (await userTurns(first.api)).some((text) => text.includes('saved, not fetched, then killed')), 20_000);
      // Killed while its download hangs: the file is neither fetched nor answered.
      await waitUntil('the download asked for and held', () => fake.downloads.length > downloadsBefore, 20_000);
      await first.gateway.kill();
    } finally {
      release();
    }
    const heldBefore = fake.downloads.length;
    await start();
    const line = fileLine('image', 'image/jpeg', photo);
    await waitUntil('the answer naming the photo', () => replies(room).some((reply) => reply.includes(line)), 30_000);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(replies(room).filter((reply) => reply.includes(line))).toHaveLength(1);
    expect(replies(room)).toHaveLength(1);
    // Fetched again by the new gateway (the held request died with the first).
    expect(fake.downloads.length).toBeGreaterThan(heldBefore);
  }, 120_000);
});
