import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const HOMING_BIN = fileURLToPath(new URL('../../bin/homing.js', import.meta.url));

/** How long a test waits for a gateway to print its URL. */
const START_TIMEOUT_MS = 45_000;

export interface RunningGateway {
  readonly child: ChildProcess;
  readonly url: string;
  readonly port: number;
  readonly token: string;
  output(): string;
  /** SIGTERM: a clean stop. */
  stop(): Promise<void>;
  /** SIGKILL: a crash. Nothing in the gateway runs after it; resolves once the process is gone. */
  kill(): Promise<void>;
}

export interface StartOptions {
  /**
   * 'any' (the default) passes `--port 0`, so tests never compete for a port;
   * 'saved' passes no `--port`: the data directory's saved port, else the default.
   */
  readonly port?: 'any' | 'saved';
}

/**
 * Starts the built headless gateway (`homing gateway`) as a real child process
 * and waits for the URL it prints. Needs `npm run build` first (npm test does it).
 */
export async function startHeadlessGateway(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  options: StartOptions = {},
): Promise<RunningGateway> {
  const portArgs = options.port === 'saved' ? [] : ['--port', '0'];
  const child = spawn(process.execPath, [HOMING_BIN, 'gateway', ...portArgs, ...args], {
    // HOMING_NO_UPDATE_CHECK: a test gateway never asks GitHub for a new release.
    env: { ...process.env, HOMING_NO_UPDATE_CHECK: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (data: Buffer) => (output += data.toString()));
  child.stderr!.on('data', (data: Buffer) => (output += data.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    // ~1 s on a quiet machine; a loaded CI machine running two test files at once can take far longer.
    const timer = setTimeout(() => {
      child.kill('SIGKILL'); // never leave a half-started gateway behind
      reject(new Error(`the gateway printed no URL in ${START_TIMEOUT_MS / 1000} s:\n${output}`));
    }, START_TIMEOUT_MS);
    const check = () => {
      const match = /Open the window: (http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the gateway exited with ${code} before printing a URL:\n${output}`));
    });
  });
  const parsed = new URL(url);
  return {
    child,
    url,
    port: Number(parsed.port),
    token: parsed.searchParams.get('token')!,
    output: () => output,
    stop: () => signalAndWait(child, 'SIGTERM'),
    kill: () => signalAndWait(child, 'SIGKILL'),
  };
}

function signalAndWait(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}
