import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports';
import { requireInstalled, serverProcess, type RunningServer } from './server-process';

/** Debian installs it outside a normal user's PATH; the absolute path works for everyone. */
export const NGIRCD_PATH = process.env.HOMING_NGIRCD ?? '/usr/sbin/ngircd';

export interface NgircdOptions {
  /** A server password (`PASS`); clients without it get `464` and are dropped. */
  readonly password?: string;
  /** ngircd's default is 9, which is too short for readable test nicks. */
  readonly maxNickLength?: number;
}

export interface RunningNgircd extends RunningServer {
  /**
   * Freezes the server (SIGSTOP): sockets stay open but nothing answers, which is
   * what a connection looks like after the laptop slept through the server dropping it.
   */
  pause(): void;
  /** Thaws a paused server (SIGCONT). */
  resume(): void;
}

/**
 * A real ngircd on 127.0.0.1 (TEST-SERVERS.md): config in a temp dir, a free port,
 * `ngircd -n -f <abs cfg>` as our own child (server-process.ts).
 */
export async function startNgircd(options: NgircdOptions = {}): Promise<RunningNgircd> {
  requireInstalled(NGIRCD_PATH, 'ngircd', 'ngircd');
  const dir = await mkdtemp(join(tmpdir(), 'homing-ngircd-'));
  const port = await freePort();
  const configPath = join(dir, 'ngircd.conf');
  await writeFile(configPath, configText(port, options));
  const server = serverProcess({ name: 'ngircd', path: NGIRCD_PATH, args: ['-n', '-f', configPath], port: () => port, startMs: 10_000, stopMs: 2_000 });

  await server.start();
  return {
    host: '127.0.0.1',
    port,
    output: server.output,
    stop: () => server.stop(),
    start: server.start,
    pause: server.pause,
    resume: server.resume,
    dispose: async () => {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function configText(port: number, options: NgircdOptions): string {
  // MaxPenaltyTime = 0: with flood penalties on, bursts are throttled for seconds, and
  // a client that leaves with commands queued makes ngircd 26.1 loop on "Broken pipe".
  return [
    '[Global]',
    'Name = irc.test.local',
    'Info = homing test server',
    'Listen = 127.0.0.1',
    `Ports = ${port}`,
    'MotdPhrase = "test"',
    ...(options.password ? [`Password = ${options.password}`] : []),
    '[Limits]',
    'MaxPenaltyTime = 0',
    'MaxConnectionsIP = 0',
    `MaxNickLength = ${options.maxNickLength ?? 30}`,
    // Short ping timeouts keep a test's dead clients from lingering.
    'PingTimeout = 30',
    'PongTimeout = 10',
    '[Options]',
    'DNS = no',
    'Ident = no',
    'PAM = no',
    '',
  ].join('\n');
}

/** IRC adapter timing for tests against a local ngircd: fast pacing, reconnects and timeouts. */
export const FAST_IRC = {
  pacing: { burst: 4, intervalMs: 2 },
  reconnectDelayMs: () => 100,
  ackTimeoutMs: 3_000,
  probeTimeoutMs: 500,
  registerTimeoutMs: 2_000,
} as const;
