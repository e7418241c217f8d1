import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports';

/** Debian installs it outside a normal user's PATH; the absolute path works for everyone. */
export const NGIRCD_PATH = process.env.HOMING_NGIRCD ?? '/usr/sbin/ngircd';

export interface NgircdOptions {
  /** A server password (`PASS`); clients without it get `464` and are dropped. */
  readonly password?: string;
  /** ngircd's default is 9, which is too short for readable test nicks. */
  readonly maxNickLength?: number;
}

export interface RunningNgircd {
  readonly host: '127.0.0.1';
  readonly port: number;
  /** Everything ngircd printed since the first start, for failure messages. */
  output(): string;
  /** Stops the server (SIGTERM, then SIGKILL after 2 s) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same config. */
  start(): Promise<void>;
  /**
   * Freezes the server (SIGSTOP): sockets stay open but nothing answers, which is
   * what a connection looks like after the laptop slept through the server dropping it.
   */
  pause(): void;
  /** Thaws a paused server (SIGCONT). */
  resume(): void;
  /** Stops it and removes its temp dir. */
  dispose(): Promise<void>;
}

/**
 * A real ngircd on 127.0.0.1 (TEST-SERVERS.md): config in a temp dir, a free port,
 * `ngircd -n -f <abs cfg>` as our own child, so the pid we stop is the server's
 * (as root it drops to `nobody` and writes no pid file).
 */
export async function startNgircd(options: NgircdOptions = {}): Promise<RunningNgircd> {
  if (!existsSync(NGIRCD_PATH)) {
    throw new Error(`no ngircd at ${NGIRCD_PATH}: install Debian's ngircd package (npm test does it as root)`);
  }
  const dir = await mkdtemp(join(tmpdir(), 'homing-ngircd-'));
  const port = await freePort();
  const configPath = join(dir, 'ngircd.conf');
  await writeFile(configPath, configText(port, options));

  let child: ChildProcess | undefined;
  let output = '';

  const start = async (): Promise<void> => {
    if (child && child.exitCode === null && child.signalCode === null) return;
    const proc = spawn(NGIRCD_PATH, ['-n', '-f', configPath], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    proc.stdout!.on('data', (data: Buffer) => (output += data.toString()));
    proc.stderr!.on('data', (data: Buffer) => (output += data.toString()));
    await waitForPort(port, proc, () => output);
  };

  const stop = async (): Promise<void> => {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill('SIGCONT'); // a paused server cannot act on SIGTERM
    await new Promise<void>((resolve) => {
      const kill = setTimeout(() => proc.kill('SIGKILL'), 2_000);
      proc.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      proc.kill('SIGTERM');
    });
  };

  await start();
  return {
    host: '127.0.0.1',
    port,
    output: () => output,
    stop,
    start,
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
    dispose: async () => {
      await stop();
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

async function waitForPort(port: number, proc: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(`ngircd exited (${proc.exitCode ?? proc.signalCode}) before opening port ${port}:\n${output()}`);
    }
    if (await canConnect(port)) return;
    if (Date.now() > deadline) throw new Error(`ngircd did not open port ${port} in 10 s:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** IRC adapter timing for tests against a local ngircd: fast pacing, reconnects and timeouts. */
export const FAST_IRC = {
  pacing: { burst: 4, intervalMs: 2 },
  reconnectDelayMs: () => 100,
  ackTimeoutMs: 3_000,
  probeTimeoutMs: 500,
  registerTimeoutMs: 2_000,
} as const;
