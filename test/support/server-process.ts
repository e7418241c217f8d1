import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { canConnect } from './ports';

/**
 * A Debian server (ngircd, prosody, dovecot) run by a test as our own child in
 * the foreground, so the pid we signal is the server's (as root these servers
 * drop privileges and may write no pid file). Started means the port answers,
 * and for a server that names a `serving` log line, that it logged it too.
 */
export interface ServerProcessOptions {
  /** Its name in errors: `ngircd`. */
  readonly name: string;
  readonly path: string;
  readonly args: readonly string[];
  /** The port it serves, read at each start (prosody moves to another port when its first is taken). */
  port(): number;
  /** How long a start may take before it counts as failed. */
  readonly startMs: number;
  /** How long SIGTERM has before SIGKILL. */
  readonly stopMs: number;
  /** What it logs once it serves: some servers open their port before they are ready, or without being. */
  readonly serving?: RegExp;
  /** What it logs when it will not serve, to fail at once instead of at the deadline. */
  readonly refusal?: RegExp;
}

export interface ServerProcess {
  /** Everything the server printed since its first start, for failure messages. */
  output(): string;
  running(): boolean;
  pid(): number | undefined;
  /** Starts it unless it runs; resolves once it serves, rejects (and kills it) if it exits or the deadline passes. */
  start(): Promise<void>;
  /** Sends `signal` (SIGKILL after `stopMs`) and waits for the process to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** SIGSTOP: sockets stay open, nothing answers. */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
}

/** What a test sees of a running server (ngircd.ts, prosody.ts, dovecot.ts add their own). */
export interface RunningServer {
  readonly host: '127.0.0.1';
  readonly port: number;
  /** Everything the server printed since its first start, for failure messages. */
  output(): string;
  /** Stops it (SIGTERM, then SIGKILL after a grace of seconds) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same config. */
  start(): Promise<void>;
  /** Stops it and removes its temp dir. */
  dispose(): Promise<void>;
}

/** Throws, naming the Debian package, when the server is not installed. */
export function requireInstalled(path: string, name: string, debianPackage: string): void {
  if (!existsSync(path)) throw new Error(`no ${name} at ${path}: install Debian's ${debianPackage} package (npm test does it as root)`);
}

export function serverProcess(options: ServerProcessOptions): ServerProcess {
  let child: ChildProcess | undefined;
  let output = '';
  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;

  const stop = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<void> => {
    const proc = child;
    if (!proc || !running()) return;
    proc.kill('SIGCONT'); // a paused server cannot act on SIGTERM
    await new Promise<void>((resolve) => {
      const kill = setTimeout(() => proc.kill('SIGKILL'), options.stopMs);
      proc.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      proc.kill(signal);
    });
  };

  const start = async (): Promise<void> => {
    if (running()) return;
    const startedAt = output.length;
    const proc = spawn(options.path, [...options.args], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    proc.stdout!.on('data', (data: Buffer) => (output += data.toString()));
    proc.stderr!.on('data', (data: Buffer) => (output += data.toString()));
    proc.on('error', (error) => (output += `\n[spawn error] ${error.message}\n`));
    const port = options.port();
    const log = () => output.slice(startedAt);
    const deadline = Date.now() + options.startMs;
    for (;;) {
      if (proc.exitCode !== null || proc.signalCode !== null) {
        throw new Error(`${options.name} exited (${proc.exitCode ?? proc.signalCode}) before serving port ${port}:\n${log()}`);
      }
      if (options.refusal?.test(log())) {
        await stop('SIGKILL');
        throw new Error(`${options.name} did not start on port ${port}:\n${log()}`);
      }
      if ((!options.serving || options.serving.test(log())) && (await canConnect(port))) return;
      if (Date.now() > deadline) {
        await stop('SIGKILL');
        throw new Error(`${options.name} did not serve port ${port} in ${options.startMs / 1000} s:\n${log()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  return {
    output: () => output,
    running,
    pid: () => (running() ? child!.pid : undefined),
    start,
    stop,
    pause: () => void (running() && child!.kill('SIGSTOP')),
    resume: () => void (running() && child!.kill('SIGCONT')),
  };
}
