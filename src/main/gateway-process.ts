import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MessageChannelMain, utilityProcess, type UtilityProcess } from 'electron';
import type { SupervisedProcess } from './supervisor';

const HERE = fileURLToPath(new URL('.', import.meta.url));

export interface GatewayProcessHandle extends SupervisedProcess {
  /** Opens a new API channel to the gateway; returns the renderer's end. */
  openChannel(): Electron.MessagePortMain;
}

/**
 * Starts the gateway core in an Electron utilityProcess. Its output goes to the
 * app's log. Where `npm start` built better-sqlite3 for Electron's ABI, the
 * gateway loads that binding (the node_modules copy is built for plain Node).
 */
export function startGatewayProcess(options: {
  dataDir: string;
  log: (level: 'info' | 'error', line: string) => void;
}): GatewayProcessHandle {
  const binding = fileURLToPath(new URL('../native/electron/better_sqlite3.node', import.meta.url));
  const child: UtilityProcess = utilityProcess.fork(`${HERE}gateway-host.js`, ['--data-dir', options.dataDir], {
    serviceName: 'Homing gateway',
    stdio: 'pipe',
    env: { ...process.env, ...(existsSync(binding) ? { HOMING_SQLITE_BINDING: binding } : {}) },
  });
  child.stdout?.on('data', (data: Buffer) => options.log('info', data.toString().trimEnd()));
  child.stderr?.on('data', (data: Buffer) => options.log('error', data.toString().trimEnd()));
  return {
    get pid() {
      return child.pid;
    },
    onExit(listener) {
      child.once('exit', (code) => listener(code, null));
    },
    kill() {
      child.kill();
    },
    openChannel() {
      const { port1, port2 } = new MessageChannelMain();
      child.postMessage({ type: 'connect' }, [port1]);
      return port2;
    },
  };
}
