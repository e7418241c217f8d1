import Database from 'better-sqlite3';
import ircFramework from 'irc-framework';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { DeliveryPage, SessionPage, TranscriptPage } from '../src/shared/api';
import { RESEND_MARKER } from '../src/main/gateway/delivery/marker';
import { textBudget, toProtocolLines } from '../src/main/gateway/platforms/irc/lines';
import { splitReply } from '../src/main/gateway/pipeline/reply-chunks';
import { longText } from './fixtures/long-text.mjs';
import { connectApi, type ApiSocket } from './support/api-socket';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { connectIrcUser, type IrcUser } from './support/irc-user';
import { startNgircd, type RunningNgircd } from './support/ngircd';
import { waitUntil } from './support/wait';

/**
 * The real headless gateway (`homing gateway`, built by `npm run build`) killed
 * with SIGKILL at the two moments that matter, then started again on the same
 * data directory. `delivery.leaseSeconds: 2` lets the new process take over the
 * dead one's rows two seconds after its last heartbeat. IRC here runs with the
 * adapter's real defaults (4000-byte chunks, a line every 400 ms after a burst
 * of 4): the CLI has no test tuning, and the pacing is what makes a kill between
 * lines deterministic.
 */

const REPLY_AGENT = fileURLToPath(new URL('./fixtures/reply-agent.mjs', import.meta.url));
const BOT = 'homing';
const CHANNEL = '#homing';

interface Scene {
  readonly dataDir: string;
  /** The agent appends a line here each time it starts a turn. */
  readonly startedFile: string;
  /** The agent does not answer before this file exists. */
  readonly goFile: string;
}

describe('the headless gateway killed with SIGKILL', () => {
  const gateways: RunningGateway[] = [];
  const sockets: ApiSocket[] = [];
  const users: IrcUser[] = [];
  const dirs: string[] = [];
  let server: RunningNgircd | undefined;

  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.close();
    for (const gateway of gateways.splice(0)) await gateway.kill();
    for (const user of users.splice(0)) await user.quit();
    await server?.dispose();
    server = undefined;
    for (const dir of dirs.splice(0)) {
      killOrphanedAgents(join(dir, 'started'));
      rmSync(dir, { recursive: true, force: true });
    }
  });

  function scene(config: (scene: Scene) => unknown): Scene {
    const dataDir = mkdtempSync(join(tmpdir(), 'homing-crash-'));
    dirs.push(dataDir);
    const made: Scene = { dataDir, startedFile: join(dataDir, 'started'), goFile: join(dataDir, 'go') };
    writeFileSync(join(dataDir, 'config.json'), JSON.stringify(config(made)));
    return made;
  }

  async function start(dataDir: string): Promise<{ gateway: RunningGateway; api: ApiSocket }> {
    const gateway = await startHeadlessGateway(['--data-dir', dataDir]);
    gateways.push(gateway);
    const api = await connectApi(gateway);
    sockets.push(api);
    return { gateway, api };
  }

  async function crash(gateway: RunningGateway): Promise<void> {
    await gateway.kill();
    gateways.splice(gateways.indexOf(gateway), 1);
    expect(gateway.child.signalCode).toBe('SIGKILL');
  }

  async function user(nick: string, channels: string[] = []): Promise<IrcUser> {
    const connected = await connectIrcUser(server!, nick, channels);
    users.push(connected);
    return connected;
  }

  const agentStarts = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n') : []);

  /** Transcript files hold what was said; the user's text is in one of them before the agent runs. */
  const transcriptsMention = (dataDir: string, text: string) => {
    const dir = join(dataDir, 'sessions');
    return existsSync(dir) && readdirSync(dir).some((file) => readFileSync(join(dir, file), 'utf8').includes(text));
  };

  const ircConfig = (port: number) => ({
    irc: { host: '127.0.0.1', port, tls: false, nick: BOT, channels: [CHANNEL], allow: ['alice'] },
  });

  it('answers a local message again after a crash during its agent turn: one reply, in the transcript and delivered', async () => {
    const text = 'what did I ask before the crash?';
    const { dataDir, startedFile, goFile } = scene((s) => ({
      agent: { type: 'command', command: process.execPath, args: [REPLY_AGENT, '--started', s.startedFile, '--wait-for', s.goFile] },
      delivery: { leaseSeconds: 2 },
    }));
    const first = await start(dataDir);
    await first.api.call('sendLocalMessage', { text });
    await waitUntil('the agent to start its turn', () => agentStarts(startedFile).length === 1, 10_000);
    expect(transcriptsMention(dataDir, text)).toBe(true);

    await crash(first.gateway);
    writeFileSync(goFile, ''); // from now on the agent answers at once
    const second = await start(dataDir);

    let page: DeliveryPage | undefined;
    await waitUntil(
      'the interrupted turn to be answered and delivered',
      async () => {
        page = await second.api.call<DeliveryPage>('listDeliveries', {});
        return page.deliveries.some((row) => row.state === 'delivered');
      },
      15_000,
    );
    expect(page!.deliveries).toHaveLength(1);
    const row = page!.deliveries[0]!;
    expect(row).toMatchObject({ platform: 'local', state: 'delivered', attempts: 0, chunksDelivered: 1, chunksTotal: 1 });

    const sessions = await second.api.call<SessionPage>('listSessions', {});
    expect(sessions.sessions).toHaveLength(1);
    const transcript = await second.api.call<TranscriptPage>('getTranscript', { sessionId: sessions.sessions[0]!.sessionId });
    expect(transcript.messages.map((message) => [message.role, message.text])).toEqual([
      ['user', text],
      ['assistant', `You said: ${text}`],
    ]);
    expect(transcript.messages[1]).toMatchObject({ obligationId: row.id });
    // The agent ran twice: the killed turn and its re-run; nothing else.
    expect(agentStarts(startedFile).map((line) => line.replace(/^started \d+ /, ''))).toEqual([text, text]);
  });

  it('answers an IRC direct message again after a crash during its agent turn; the reply reaches the user once', async () => {
    server = await startNgircd();
    const text = 'are you still with me?';
    const { dataDir, startedFile, goFile } = scene((s) => ({
      agent: { type: 'command', command: process.execPath, args: [REPLY_AGENT, '--started', s.startedFile, '--wait-for', s.goFile] },
      platforms: ircConfig(server!.port),
      delivery: { leaseSeconds: 2 },
    }));
    const alice = await user('alice', [CHANNEL]);
    const first = await start(dataDir);
    await waitUntil('the bot to join', () => alice.joins.some((join) => join.nick === BOT), 10_000);

    alice.client.say(BOT, text);
    await waitUntil('the agent to start its turn', () => agentStarts(startedFile).length === 1, 10_000);
    await crash(first.gateway);
    await waitUntil('the killed bot to leave', () => alice.rawLines.some((line) => line.startsWith(`:${BOT}!`) && line.includes(' QUIT ')));
    writeFileSync(goFile, '');
    const second = await start(dataDir);

    await waitUntil('the reply at alice', () => alice.privmsgs.some((event) => event.nick === BOT), 15_000);
    await waitUntil(
      'the ledger to say delivered',
      async () => (await second.api.call<DeliveryPage>('listDeliveries', {})).deliveries.some((row) => row.state === 'delivered'),
    );
    await alice.roundTrip();
    expect(alice.privmsgs.filter((event) => event.nick === BOT).map((event) => [event.target, event.message])).toEqual([
      ['alice', `You said: ${text}`],
    ]);
    const page = await second.api.call<DeliveryPage>('listDeliveries', {});
    expect(page.deliveries).toHaveLength(1);
    expect(page.deliveries[0]).toMatchObject({ platform: 'irc', chatId: 'alice', state: 'delivered', attempts: 0 });
    expect(agentStarts(startedFile)).toHaveLength(2);
  });

  it('resumes a long IRC reply after a crash between its lines: nothing delivered is sent again, the chunk in flight once more, marked', async () => {
    server = await startNgircd();
    const reply = longText(7_800); // 8 416 bytes: two full chunks and a short third
    const { dataDir } = scene(() => ({
      agent: { type: 'command', command: process.execPath, args: [REPLY_AGENT, '--chars', '7800'] },
      platforms: ircConfig(server!.port),
      delivery: { leaseSeconds: 2 },
    }));
    // The chunks the pipeline records for IRC (4000 bytes, less the marker's room),
    // and the PRIVMSG lines each becomes.
    const chunks = splitReply(reply, { maxLength: 4000, unit: 'bytes' });
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    const lines = (chunk: string) => toProtocolLines(chunk, textBudget(BOT, 'alice'));
    const [first0, first1] = [lines(chunks[0]!), lines(chunks[1]!)];

    // alice shares the channel with the bot, so she sees the killed connection's
    // QUIT: every line before it came from the first process, every one after from the second.
    const alice = await user('alice', [CHANNEL]);
    const first = await start(dataDir);
    await waitUntil('the bot to join', () => alice.joins.some((join) => join.nick === BOT), 10_000);
    alice.client.say(BOT, 'tell me a long story');

    // Kill in the middle of the second chunk: its first two lines are in.
    await waitUntil('two lines of the second chunk', () => botLines(alice.rawLines).length >= first0.length + 2, 20_000);
    await crash(first.gateway);
    await waitUntil('the killed bot to leave', () => quitIndex(alice.rawLines) >= 0);
    const before = botLines(alice.rawLines.slice(0, quitIndex(alice.rawLines)));

    // What the dead process left in the ledger: chunk 0 delivered, chunk 1 in flight, the rest owed.
    const left = readLedger(dataDir);
    expect(left.obligation).toMatchObject({ state: 'attempting', attempts: 0, chunks_delivered: 1 });
    expect(left.chunks.map((chunk) => chunk.text)).toEqual(chunks);
    expect(left.chunks.map((chunk) => chunk.state)).toEqual(['delivered', 'sending', ...chunks.slice(2).map(() => 'owed')]);
    // …and what alice got from it: all of chunk 0 and part of chunk 1, in order.
    expect(before.map((line) => line.text)).toEqual([...first0, ...first1].slice(0, before.length));
    expect(before.length).toBeGreaterThan(first0.length);
    expect(before.length).toBeLessThan(first0.length + first1.length);

    const second = await start(dataDir);
    await waitUntil(
      'the rest of the reply to be delivered',
      async () => (await second.api.call<DeliveryPage>('listDeliveries', {})).deliveries.some((row) => row.state === 'delivered'),
      30_000,
    );
    await alice.roundTrip();
    const after = botLines(alice.rawLines.slice(quitIndex(alice.rawLines)));

    // The second process took the nick back (the first one's QUIT came before it connected).
    expect(new Set(after.map((line) => line.nick))).toEqual(new Set([BOT]));
    // Exactly: the marker, chunk 1 again (the one in flight), then every chunk after it.
    // Chunk 0, recorded as delivered, is not sent again; no chunk is sent twice after the restart.
    expect(after.map((line) => line.text)).toEqual([RESEND_MARKER, ...chunks.slice(1).flatMap(lines)]);
    // Every line of the reply arrived: from the first process up to the kill, the rest from the second.
    const received = [...before.slice(0, first0.length), ...after.slice(1)].map((line) => line.text);
    expect(received).toEqual(chunks.flatMap(lines));
    expect(received.join(' ').replace(/\s+/g, ' ')).toBe(reply.replace(/\s+/g, ' '));

    const row = (await second.api.call<DeliveryPage>('listDeliveries', {})).deliveries[0]!;
    expect(row).toMatchObject({ state: 'delivered', attempts: 0, chunksDelivered: chunks.length, chunksTotal: chunks.length });
  }, 60_000);
});

/** The bot's PRIVMSGs to alice in raw server lines, with the nick that sent each. */
function botLines(rawLines: readonly string[]): { nick: string; text: string }[] {
  return rawLines.flatMap((raw) => {
    const line = ircFramework.ircLineParser(raw);
    if (!line || line.command !== 'PRIVMSG' || !line.nick.startsWith(BOT) || line.params[0] !== 'alice') return [];
    return [{ nick: line.nick, text: line.params[1] ?? '' }];
  });
}

function quitIndex(rawLines: readonly string[]): number {
  return rawLines.findIndex((line) => line.startsWith(`:${BOT}!`) && line.includes(' QUIT '));
}

/** The ledger as a killed gateway left it, read without writing (no checkpoint, no recovery). */
function readLedger(dataDir: string) {
  const db = new Database(join(dataDir, 'homing.db'), { readonly: true, fileMustExist: true });
  try {
    const obligation = db.prepare('SELECT state, attempts, chunks_delivered FROM ledger_obligations').get() as Record<string, unknown>;
    const chunks = db.prepare('SELECT text, state FROM ledger_chunks ORDER BY chunk_index').all() as { text: string; state: string }[];
    return { obligation, chunks };
  } finally {
    db.close();
  }
}

/**
 * A command agent runs in its own process group, so SIGKILL on the gateway leaves
 * it running; the fixture ends by itself, and this makes sure of it. Only pids that
 * still run reply-agent.mjs are touched.
 */
function killOrphanedAgents(startedFile: string): void {
  if (!existsSync(startedFile)) return;
  for (const line of readFileSync(startedFile, 'utf8').trim().split('\n')) {
    const pid = Number(/^started (\d+)/.exec(line)?.[1]);
    if (!pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('reply-agent.mjs')) process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}
