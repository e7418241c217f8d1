import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RESEND_MARKER } from '../src/main/gateway/delivery/marker';
import { connectApi, userTurns, type ApiSocket } from './support/api-socket';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { waitUntil } from './support/wait';
import { startDiscordWorld } from './conformance/discord';
import { startEmailWorld } from './conformance/email';
import { startIrcWorld } from './conformance/irc';
import { startMatrixWorld } from './conformance/matrix';
import { startSignalWorld } from './conformance/signal';
import { startSlackWorld } from './conformance/slack';
import { startTelegramWorld } from './conformance/telegram';
import { startXmppWorld } from './conformance/xmpp';
import type { ConformanceWorld, Where } from './conformance/world';

/**
 * The intake contract, promise by promise, with the platforms as the
 * parameter: every case runs the real headless gateway (`homing gateway`,
 * built by `npm run build`) against each service as it really behaves — a real
 * server from Debian, or a fake that models the service's documented
 * behaviour — and kills it with SIGKILL where a promise must survive a crash.
 * A platform takes the cases its intake contract allows (docs/platforms.md,
 * "What an outage can cost"): IRC keeps nothing while Homing is down, so the
 * cases that need kept messages do not apply to it.
 */

const REPLY_AGENT = fileURLToPath(new URL('./fixtures/reply-agent.mjs', import.meta.url));

const PHOTO_MIME = 'image/jpeg';

/** A small JPEG-signed file, different for every case (its hash tells the cases' answers apart). */
function testPhoto(seed: number): Buffer {
  return Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]), Buffer.from('JFIF\0'), Buffer.alloc(4_000, seed % 256), Buffer.from(String(Date.now())), Buffer.from([0xff, 0xd9])]);
}

/** How long a case waits after the answer for a second copy that must not come. */
const SETTLE_MS = 1_500;

/** A case starts the gateway up to three times and waits for a server each time: room for a loaded machine. */
const CASE_MS = 90_000;

const WORLDS: readonly (readonly [string, () => Promise<ConformanceWorld>])[] = [
  ['telegram', startTelegramWorld],
  ['matrix', startMatrixWorld],
  ['discord', startDiscordWorld],
  ['signal', startSignalWorld],
  ['slack', startSlackWorld],
  ['email', startEmailWorld],
  ['xmpp', startXmppWorld],
  ['irc', startIrcWorld],
];

describe.each(WORLDS)('the intake contract on %s', (_name, startWorld) => {
  let world: ConformanceWorld;
  let dataDir: string;
  let cases = 0;
  const gateways: RunningGateway[] = [];
  /** Every gateway the case started, running or not, for its log. */
  const started: RunningGateway[] = [];
  const sockets: ApiSocket[] = [];

  beforeAll(async () => {
    world = await startWorld();
  }, 60_000);

  afterAll(async () => {
    await world?.dispose();
  });

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), `homing-conformance-${world.platform}-`));
    cases++;
  });

  afterEach(async (context) => {
    // A failed case shows what each gateway it started said: the log is the only witness of the other process.
    if (context.task.result?.state === 'fail' || process.env.HOMING_CONFORMANCE_LOG) {
      for (const [i, gateway] of started.entries()) console.error(`gateway ${i + 1} of the case:\n${gateway.output().slice(-6_000)}`);
    }
    started.length = 0;
    for (const socket of sockets.splice(0)) socket.close();
    for (const gateway of gateways.splice(0)) await gateway.kill();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** A text no other case uses, so each case counts only its own answers. */
  const unique = (what: string) => `${what} (case ${cases}, ${Date.now().toString(36)})`;
  const place = (): Where => world.places[0]!;
  const holdFile = () => join(dataDir, 'hold-intake');

  function configure(agentArgs: string[] = []): void {
    writeFileSync(
      join(dataDir, 'config.json'),
      JSON.stringify({
        agent: { type: 'command', command: process.execPath, args: [REPLY_AGENT, ...agentArgs] },
        platforms: world.platformsConfig,
        delivery: { leaseSeconds: 2 },
      }),
    );
  }

  async function start(env: NodeJS.ProcessEnv = {}): Promise<{ gateway: RunningGateway; api: ApiSocket }> {
    const gateway = await startHeadlessGateway(['--data-dir', dataDir], { ...world.env, ...env });
    gateways.push(gateway);
    started.push(gateway);
    const api = await connectApi(gateway);
    sockets.push(api);
    await world.whenBotReady(30_000);
    return { gateway, api };
  }

  async function end(gateway: RunningGateway, how: 'stop' | 'kill'): Promise<void> {
    await (how === 'stop' ? gateway.stop() : gateway.kill());
    gateways.splice(gateways.indexOf(gateway), 1);
  }

  /** How many of the bot's messages in `where` answer `text` (the marker, if any, stripped). */
  async function answers(text: string, where: Where): Promise<number> {
    const expected = `You said: ${text}`;
    return (await world.replies(where)).filter((reply) => reply.replace(`${RESEND_MARKER}\n`, '').trim() === expected).length;
  }

  async function answeredOnce(text: string, where: Where, timeoutMs = 30_000): Promise<void> {
    await waitUntil(`the answer to "${text}"`, async () => (await answers(text, where)) > 0, timeoutMs);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    expect(await answers(text, where), `"${text}" answered exactly once`).toBe(1);
  }


  it('answers a message sent while Homing was down, once', async (context) => {
    if (!world.keepsWhileDown) return context.skip();
    configure();
    const first = await start();
    await end(first.gateway, 'stop');
    const text = unique('sent while Homing was down');
    await world.say(text, place());
    await start();
    await answeredOnce(text, place());
  }, CASE_MS);

  it('answers a message it had received but not saved when it was killed, once', async (context) => {
    if (!world.keepsWhileDown) return context.skip();
    configure();
    writeFileSync(holdFile(), '');
    const first = await start({ HOMING_TEST_HOLD_INTAKE: holdFile() });
    const text = unique('received, then killed');
    await world.say(text, place());
    await waitUntil('the message received and held before its save', () => existsSync(`${holdFile()}.held`), 20_000);
    await end(first.gateway, 'kill');
    unlinkSync(holdFile());
    await start();
    await answeredOnce(text, place());
  }, CASE_MS);

  it('answers a message it had saved when it was killed once, not twice', async () => {
    const go = join(dataDir, 'go');
    configure(['--wait-for', go]);
    const first = await start();
    const text = unique('saved, then killed');
    await world.say(text, place());
    await waitUntil('the message saved', async () => (await userTurns(first.api)).some((saved) => saved.includes(text)), 20_000);
    await end(first.gateway, 'kill');
    writeFileSync(go, '');
    const second = await start();
    await answeredOnce(text, place());
    // A saved turn may carry what the platform adds to the text (an email's sender lines).
    expect((await userTurns(second.api)).filter((saved) => saved.includes(text))).toHaveLength(1);
  }, CASE_MS);

  it('answers every addressed message of an outage with more traffic than one catch-up page', async (context) => {
    if (!world.flood) return context.skip();
    configure();
    const first = await start();
    await end(first.gateway, 'stop');
    const texts = await world.flood();
    await start();
    for (const text of texts) await waitUntil(`the answer to "${text}"`, async () => (await answers(text, place())) > 0, 120_000);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    for (const text of texts) expect(await answers(text, place()), `"${text}" answered exactly once`).toBe(1);
  }, 240_000);

  it('skips nothing when the service fails once in the middle of a catch-up', async (context) => {
    if (!world.failNextCatchUp) return context.skip();
    configure();
    const first = await start();
    await end(first.gateway, 'stop');
    const text = unique('sent before a failed catch-up');
    await world.say(text, place());
    world.failNextCatchUp();
    await start();
    await answeredOnce(text, place(), 60_000);
  }, CASE_MS);

  it('forgets nothing that decides what addresses the bot across a clean restart', async (context) => {
    const remembers = world.remembers;
    if (!remembers) return context.skip();
    configure();
    const first = await start();
    await remembers.before();
    await end(first.gateway, 'stop');
    await start();
    const text = unique('addressed by what the bot remembers');
    await remembers.after(text);
    await answeredOnce(text, remembers.where);
  }, CASE_MS);

  /** A file's line in the reply agent's answer: what Homing fetched, hashed (test/fixtures/reply-agent.mjs). */
  const fileLine = (kind: string, bytes: Buffer) => `[file ${kind} ${PHOTO_MIME} ${bytes.length} sha256:${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}]`;
  const repliesWith = async (line: string) => (await world.replies(place())).filter((reply) => reply.includes(line)).length;

  it('hands a photo to the agent as the bytes the person sent', async (context) => {
    if (!world.sendFile) return context.skip();
    configure();
    await start();
    const photo = testPhoto(cases);
    await world.sendFile({ kind: 'image', name: 'plant.jpg', mime: PHOTO_MIME, bytes: photo, caption: unique('what is this plant?') }, place());
    await waitUntil('the answer naming the photo', async () => (await repliesWith(fileLine('image', photo))) > 0, 30_000);
  }, CASE_MS);

  it('answers a file whose message was saved but not fetched when it was killed, once', async (context) => {
    if (!world.sendFile || !world.holdDownloads) return context.skip();
    configure();
    const first = await start();
    const release = world.holdDownloads();
    const photo = testPhoto(cases);
    const caption = unique('saved, not fetched, then killed');
    try {
      await world.sendFile({ kind: 'image', name: 'plant.jpg', mime: PHOTO_MIME, bytes: photo, caption }, place());
      await waitUntil('the message saved', async () => (await userTurns(first.api)).some((saved) => saved.includes(caption)), 20_000);
      await end(first.gateway, 'kill');
    } finally {
      release();
    }
    await start();
    await waitUntil('the answer naming the photo', async () => (await repliesWith(fileLine('image', photo))) > 0, 30_000);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    expect(await repliesWith(fileLine('image', photo)), 'answered exactly once').toBe(1);
  }, CASE_MS);

  it('marks a resend made after the service forgot its deduplication key', async (context) => {
    const dedup = world.dedup;
    if (!dedup) return context.skip();
    configure();
    const first = await start();
    const release = dedup.hangNextSend();
    const text = unique('resent after the dedup window');
    await world.say(text, place());
    await waitUntil('the reply taken by the service', async () => (await answers(text, place())) > 0, 20_000);
    await end(first.gateway, 'kill');
    release();
    // As if the gateway had stayed away longer than the service keeps its keys: the
    // reply was recorded a window ago, and the service has forgotten it.
    const db = new Database(join(dataDir, 'homing.db'));
    db.prepare('UPDATE ledger_outbox SET created_at = created_at - ?').run(dedup.windowMs + 60_000);
    db.close();
    dedup.forget();
    await start();
    const expected = `You said: ${text}`;
    await waitUntil('the reply resent', async () => (await answers(text, place())) === 2, 30_000);
    const copies = (await world.replies(place())).filter((reply) => reply.includes(expected));
    expect(copies[1]!.startsWith(RESEND_MARKER), 'the second copy carries the resend marker').toBe(true);
  }, CASE_MS);
});
