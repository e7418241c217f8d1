import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MessageChannelMain, utilityProcess, type UtilityProcess } from 'electron';
import type { HostMessage } from './gateway-control';
import type { SecretName } from './gateway/secrets/secret-store';
import type { SupervisedProcess } from './supervisor';

const HERE = fileURLToPath(new URL('.', import.meta.url));
/** Gateway.stop gives running turns and sends 5 s; then the process is killed. */
const STOP_DEADLINE_MS = 8_000;

export interface GatewayProcessHandle extends SupervisedProcess {
  /** Opens a new API channel to the gateway; returns the other end (for a window or the main process). */
  openChannel(): Electron.MessagePortMain;
  /** Posts a control message to the gateway process (gateway-host.ts). */
  post(message: HostMessage): void;
}

export interface GatewayProcessOptions {
  readonly dataDir: string;
  /** One line of the process's output (its line logger's lines, and any crash output). */
  readonly log: (stream: 'stdout' | 'stderr', line: string) => void;
  /** With safeStorage: the decrypted secrets, sent over the parent port before the gateway starts. */
  readonly secrets?: Partial<Record<SecretName, string>>;
  /** A message the gateway process posted (e.g. a secret changed). */
  readonly onMessage?: (message: unknown) => void;
}

/**
 * Starts the gateway core in an Electron utilityProcess. Its output goes to the
 * app's log. Where `npm start` built better-sqlite3 for Electron's ABI, the
 * gateway loads that binding (the node_modules copy is built for plain Node; a
 * packaged app's copy was rebuilt for Electron by electron-builder).
 */
export function startGatewayProcess(options: GatewayProcessOptions): GatewayProcessHandle {
  const binding = fileURLToPath(new URL('../native/electron/better_sqlite3.node', import.meta.url));
  const args = ['--data-dir', options.dataDir, ...(options.secrets ? ['--secrets-from-parent'] : [])];
  const child: UtilityProcess = utilityProcess.fork(`${HERE}gateway-host.js`, args, {
    serviceName: 'Homing gateway',
    stdio: 'pipe',
    env: { ...process.env, ...(existsSync(binding) ? { HOMING_SQLITE_BINDING: binding } : {}) },
  });
  for (const stream of ['stdout', 'stderr'] as const) {
    child[stream]?.on('data', (data: Buffer) => {
      for (const line of data.toString().trimEnd().split('\n')) options.log(stream, line);
    });
  }
  child.on('message', (message: unknown) => options.onMessage?.(message));
  /** Set when the stop deadline passed and the process was killed: its exit is then reported as a signal, never as clean. */
  let killedAtDeadline = false;
  // Sent first: utilityProcess queues messages until the child listens.
  if (options.secrets) child.postMessage({ type: 'secrets', values: options.secrets });
  return {
    get pid() {
      return child.pid;
    },
    onExit(listener) {
      child.once('exit', (code) => listener(code, killedAtDeadline ? 'SIGTERM' : null));
    },
    /** A graceful stop: the gateway finishes or hands over its work (Gateway.stop), killed if it hangs. */
    kill() {
      child.postMessage({ type: 'stop' });
      const timer = setTimeout(() => {
        killedAtDeadline = true;
        child.kill();
      }, STOP_DEADLINE_MS);
      child.once('exit', () => clearTimeout(timer));
    },
    post(message) {
      child.postMessage(message);
    },
    openChannel() {
      const { port1, port2 } = new MessageChannelMain();
      child.postMessage({ type: 'connect' }, [port1]);
      return port2;
    },
  };
}
