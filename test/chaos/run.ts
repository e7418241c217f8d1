import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DeliveryRow } from '../../src/shared/api';
import { agentProcesses, killAll, stillAlive } from './agent-processes';
import { analyze, type ChaosFigures, type KillRecord, type RunRecords, type SentRequest } from './analyze';
import { countDeliveries, killGateway, listDeliveries, liveGateways, startGateway, stopGateway, type ChaosGateway } from './gateway';
import { startDiscordPlatform } from './discord-platform';
import { startSignalPlatform } from './signal-platform';
import { startSlackPlatform } from './slack-platform';
import { startEmailPlatform } from './email-platform';
import { startIrcPlatform } from './irc-platform';
import { startMatrixPlatform } from './matrix-platform';
import { seededRandom, type ChaosOptions, type ChaosPlatformName } from './options';
import type { ChaosPlatform } from './platform';
import { startTelegramPlatform } from './telegram-platform';
import { startXmppPlatform } from './xmpp-platform';
import { formatReport, verdict, type Verdict } from './report';

/** Each chaos platform's chat server with its users, started for one run: `irc` a real ngircd, `telegram` the fake Bot API (test/support/fake-telegram.ts), `matrix` the fake homeserver (test/support/fake-matrix.ts), `email` a real dovecot and an SMTP sink, `discord` the fake Discord (test/support/fake-discord.ts), `slack` the fake Slack (test/support/fake-slack.ts), `xmpp` a real prosody. */
const PLATFORM_STARTERS: Record<ChaosPlatformName, typeof startIrcPlatform> = {
  irc: startIrcPlatform,
  telegram: startTelegramPlatform,
  matrix: startMatrixPlatform,
  email: startEmailPlatform,
  discord: startDiscordPlatform,
  signal: startSignalPlatform,
  slack: startSlackPlatform,
  xmpp: startXmppPlatform,
};

/**
 * One chaos run: the built headless gateway (a command agent of our own) on a
 * chat platform (a real ngircd, prosody or dovecot, or a fake Bot API, homeserver or Discord: platform.ts), people
 * sending numbered requests in the group and by direct message, SIGKILLs of the
 * gateway and restarts of the server at seeded moments, then a drain, a clean
 * stop and the figures (analyze.ts).
 */

const AGENT = fileURLToPath(new URL('./chaos-agent.mjs', import.meta.url));
const NAMES = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'heidi'];
/** Orphan agents are counted this long after a kill. */
const ORPHAN_DELAY_MS = 3_000;
/** The drain ends early once nothing is owed and the bot has said nothing for this long. */
const QUIET_MS = 15_000;

export interface ChaosResult {
  readonly options: ChaosOptions;
  readonly figures: ChaosFigures;
  readonly verdict: Verdict;
  readonly report: string;
  readonly durationMs: number;
  /** Kept with --keep, and when the run failed (its gateway log, for a diagnosis). */
  readonly runDir: string | undefined;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Last-resort cleanups (Ctrl-C, an uncaught error): kill what this run started, remove its files. */
export const emergencyCleanups = new Set<() => Promise<void>>();

export async function runChaos(options: ChaosOptions, progress: (line: string) => void = () => {}): Promise<ChaosResult> {
  const startedAt = Date.now();
  const runId = `chaos-run-${process.pid}-${startedAt.toString(36)}`;
  const runDir = mkdtempSync(join(tmpdir(), 'homing-chaos-'));
  const dataDir = join(runDir, 'data');
  const configFile = join(runDir, 'config.json');
  const logFile = join(runDir, 'gateway.log');
  const paths = { dataDir, configFile, logFile };
  const elapsed = () => `${((Date.now() - startedAt) / 1000).toFixed(1)} s`;
  const say = (line: string) => progress(`[chaos ${elapsed()}] ${line}`);

  let platform: ChaosPlatform | undefined;
  const disposers: (() => Promise<void>)[] = [];
  let gateway: ChaosGateway | undefined;
  // Set when the run ends (or fails): the send and chaos loops stop at their next step.
  let finished = false;
  // A run that threw or failed its verdict keeps its directory (the gateway's log says why).
  let keepDir = options.keep;
  const emergency = async () => {
    finished = true;
    for (const child of liveGateways) child.kill('SIGKILL');
    killAll(agentProcesses(runId));
    if (!options.keep) rmSync(runDir, { recursive: true, force: true });
    await Promise.all(disposers.map((dispose) => dispose().catch(() => undefined)));
  };
  emergencyCleanups.add(emergency);

  try {
    const userNicks = NAMES.slice(0, options.users);
    while (userNicks.length < options.users) userNicks.push(`user${userNicks.length + 1}`);
    const register = (dispose: () => Promise<void>) => void disposers.push(dispose);
    platform = await PLATFORM_STARTERS[options.platform](userNicks, register);
    const chat = platform;
    writeFileSync(
      configFile,
      JSON.stringify(
        {
          agent: { type: 'command', command: process.execPath, args: [AGENT, '--run', runId, '--max-delay-ms', '1500'] },
          platforms: chat.platformsConfig,
          ...(options.leaseSeconds === undefined ? {} : { delivery: { leaseSeconds: options.leaseSeconds } }),
        },
        null,
        2,
      ),
    );

    gateway = await startGateway(paths, chat.env);
    try {
      await chat.whenBotReady(30_000);
    } catch (error) {
      throw new Error(`${(error as Error).message} (see ${logFile})`);
    }
    say(`gateway up on ${options.platform}; seed ${options.seed}, run dir ${runDir}`);

    const requests: SentRequest[] = [];
    const kills: KillRecord[] = [];
    const orphanCounts: Promise<void>[] = [];
    /** Per gateway start, ms from spawn to its URL (Node loading the gateway: part of every takeover). */
    const bootTimes: number[] = [gateway.readyAt - gateway.spawnedAt];
    let serverRestarts = 0;
    const sendRandom = seededRandom(options.seed);
    const chaosRandom = seededRandom(options.seed ^ 0x5bd1e995);
    const sendPhaseMs = (options.messages / options.rate) * 1000;

    const sendLoop = async () => {
      const begin = Date.now();
      for (let seq = 1; seq <= options.messages && !finished; seq++) {
        await sleep(begin + (seq * 1000) / options.rate - Date.now());
        const user = userNicks[Math.floor(sendRandom() * userNicks.length)]!;
        const inChannel = sendRandom() < 0.5;
        const long = sendRandom() < 1 / options.longEvery;
        const lines = long ? 11 + Math.floor(sendRandom() * 8) : 1;
        const slow = sendRandom() < 1 / options.slowEvery;
        const id = `req-${String(seq).padStart(4, '0')}`;
        const text = `${id}${long ? ` long ${lines}` : ''}${slow ? ' slow' : ''}`;
        // A user who is offline (the server is restarting) sends once back; bounded.
        for (let waited = 0; ; waited += 50) {
          const sent = chat.send(user, inChannel, text);
          if (sent || finished) break;
          if (waited > 60_000) throw new Error(`${user} could not send for 60 s`);
          await sleep(50);
        }
        requests.push({ id, from: user, conversation: chat.conversationOf?.(user, inChannel) ?? (inChannel ? chat.group : user), lines, sentAt: Date.now() });
        if (seq % 50 === 0) say(`sent ${seq}/${options.messages}`);
      }
    };

    const untilOr = async (condition: () => boolean, timeoutMs: number) => {
      for (let waited = 0; waited < timeoutMs && !condition() && !finished; waited += 20) await sleep(20);
    };

    const killAndRestart = async (index: number, kind: string) => {
      const current = gateway!;
      const alive = agentProcesses(runId);
      const at = Date.now();
      await killGateway(current);
      gateway = undefined;
      const record: { at: number; kind: string; restartedAt: number | undefined; orphans: number } = { at, kind, restartedAt: undefined, orphans: 0 };
      kills.push(record);
      // Agents that ran at the kill and still run 3 s later (a new agent of the next gateway is not among them).
      orphanCounts.push(sleep(ORPHAN_DELAY_MS).then(() => void (record.orphans = alive.filter(stillAlive).length)));
      say(`kill ${index}/${options.kills} (${kind}), ${alive.length} agent(s) running`);
      await sleep(chaosRandom() * 2_000); // messages sent now never reach Homing: outside the promise
      record.restartedAt = Date.now();
      gateway = await startGateway(paths, chat.env);
      bootTimes.push(gateway.readyAt - gateway.spawnedAt);
    };

    const chaosLoop = async () => {
      const events: ('kill' | 'server')[] = [
        ...Array.from({ length: options.kills }, () => 'kill' as const),
        ...Array.from({ length: options.serverRestarts }, () => 'server' as const),
      ];
      for (let i = events.length - 1; i > 0; i--) {
        const j = Math.floor(chaosRandom() * (i + 1));
        [events[i], events[j]] = [events[j]!, events[i]!];
      }
      const gap = sendPhaseMs / (events.length + 1);
      let killIndex = 0;
      let previous: 'kill' | 'server' | undefined;
      for (const event of events) {
        if (finished) return;
        if (event === 'server') {
          await sleep(gap * (0.5 + chaosRandom()));
          serverRestarts++;
          say(`server restart ${serverRestarts}/${options.serverRestarts}`);
          await chat.restartServer(chaosRandom);
        } else {
          killIndex++;
          const kinds = previous === 'kill' ? ['random', 'during-turn', 'mid-reply', 'mid-sweep'] : ['random', 'during-turn', 'mid-reply'];
          const kind = kinds[Math.floor(chaosRandom() * kinds.length)]!;
          if (kind === 'mid-sweep') {
            // Right after the previous restart: while recovery and the start-up sweep run.
            await sleep(gateway!.readyAt + 200 + chaosRandom() * 1_300 - Date.now());
          } else {
            await sleep(gap * (0.5 + chaosRandom()));
            const armedAt = Date.now();
            if (kind === 'during-turn') {
              await untilOr(() => agentProcesses(runId).length > 0, 20_000);
              await sleep(chaosRandom() * 300);
            } else if (kind === 'mid-reply') {
              await untilOr(() => chat.lastMidReplyAt() > armedAt, 20_000);
            } else {
              await sleep(chaosRandom() * 2_000);
            }
          }
          await killAndRestart(killIndex, kind);
        }
        previous = event;
      }
    };

    await Promise.all([sendLoop(), chaosLoop()]);
    say(`sent ${requests.length}, ${kills.length} kills, ${serverRestarts} server restarts; draining`);

    const streams = () => chat.streams();
    const records = (rows: { abandoned: DeliveryRow[]; failed: DeliveryRow[]; owed: number; recorded?: DeliveryRow[] }): RunRecords => {
      const { handed, handedOrder } = chat.handed(kills);
      return {
        requests,
        streams: streams(),
        handed,
        handedOrder,
        reached: readUserTurns(dataDir),
        kills,
        serverRestarts,
        recorded: recordedAt(rows.recorded ?? []),
        abandonedRows: rows.abandoned,
        failedRows: rows.failed,
        owedAtEnd: rows.owed,
        observerGaps: chat.observerGaps(),
        bootTimes,
      };
    };

    const drainDeadline = Date.now() + options.drainTimeoutMs;
    for (let round = 0; Date.now() < drainDeadline; round++) {
      await sleep(1_000);
      const now = analyze(records({ abandoned: [], failed: [], owed: 0 }));
      const waiting = now.lostAfterReaching;
      if (waiting === 0) break;
      if (round % 5 === 4) {
        const owed = (await countDeliveries(dataDir, 'pending')) + (await countDeliveries(dataDir, 'attempting'));
        const retrying = (await listDeliveries(dataDir, 'failed')).filter((row) => row.nextAttemptAt !== null).length;
        const lastLine = Math.max(0, ...[...streams().values()].map((stream) => stream.at(-1)?.at ?? 0));
        say(`drain: ${waiting} reached Homing and not answered yet; ledger owes ${owed + retrying}`);
        if (owed + retrying === 0 && Date.now() - lastLine > QUIET_MS && agentProcesses(runId).length === 0) break;
      }
    }

    const stoppedCleanly = await stopGateway(gateway);
    gateway = undefined;
    if (!stoppedCleanly) say('the gateway did not stop within 15 s of SIGTERM; killed');
    await Promise.all(orphanCounts);
    const [abandoned, failed, pending, attempting, delivered] = await Promise.all([
      listDeliveries(dataDir, 'abandoned'),
      listDeliveries(dataDir, 'failed'),
      countDeliveries(dataDir, 'pending'),
      countDeliveries(dataDir, 'attempting'),
      listDeliveries(dataDir, 'delivered'),
    ]);
    const final = records({ abandoned, failed, owed: pending + attempting, recorded: [...delivered, ...abandoned, ...failed] });
    const figures = analyze(final);
    if (options.keep) {
      // Everything the figures came from, for a diagnosis (Maps as entry lists).
      const plain = { ...final, streams: [...final.streams], handed: [...final.handed], handedOrder: [...final.handedOrder], reached: [...final.reached] };
      writeFileSync(join(runDir, 'records.json'), JSON.stringify(plain, null, 1));
    }
    const result = verdict(figures, options.maxTakeoverMs);
    if (!result.ok) keepDir = true;
    const header = [
      `Homing chaos run on ${options.platform} — seed ${options.seed}, ${options.messages} messages, ${options.kills} kills, ${options.serverRestarts} server restarts, ${options.users} users, ${options.rate} req/s`,
      `settings: ${options.leaseSeconds === undefined ? 'defaults (lease 30 s)' : `lease ${options.leaseSeconds} s`}${options.fast ? ' (--fast)' : ''}; took ${elapsed()}`,
    ].join('\n');
    return {
      options,
      figures,
      verdict: result,
      report: formatReport(figures, result, header),
      durationMs: Date.now() - startedAt,
      runDir: keepDir ? runDir : undefined,
    };
  } catch (error) {
    keepDir = true;
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`${message} — the run's files are kept in ${runDir} (the gateway's log: ${logFile})`, { cause: error });
  } finally {
    finished = true;
    if (gateway) await killGateway(gateway);
    killAll(agentProcesses(runId));
    await platform?.dispose();
    if (!keepDir) rmSync(runDir, { recursive: true, force: true });
    emergencyCleanups.delete(emergency);
  }
}

/** Request ids with a user turn in the gateway's transcripts (`sessions/*.jsonl`), and how many each has. */
export function readUserTurns(dataDir: string): Map<string, number> {
  const counts = new Map<string, number>();
  const dir = join(dataDir, 'sessions');
  if (!existsSync(dir)) return counts;
  for (const file of readdirSync(dir)) {
    if (!file.endsWith('.jsonl')) continue;
    let text: string;
    try {
      text = readFileSync(join(dir, file), 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      if (!line.includes('"user"')) continue;
      let record: { type?: unknown; text?: unknown };
      try {
        record = JSON.parse(line) as typeof record;
      } catch {
        continue; // a line being written, or torn by a kill
      }
      if (record.type !== 'user' || typeof record.text !== 'string') continue;
      const id = /\breq-\d+\b/.exec(record.text)?.[0];
      if (id) counts.set(id, (counts.get(id) ?? 0) + 1);
    }
  }
  return counts;
}

/** Request id → when its reply was recorded in the ledger (the reply names its request). */
function recordedAt(rows: readonly DeliveryRow[]): Map<string, number> {
  const map = new Map<string, number>();
  for (const row of rows) {
    const id = /\breq-\d+\b/.exec(row.preview)?.[0];
    if (id && !map.has(id)) map.set(id, row.createdAt);
  }
  return map;
}
