/**
 * The gateway process under the tray app: an Electron utilityProcess started by
 * the supervisor in the main process. It holds the gateway core and serves the
 * API on each MessagePort the main process hands over (one per window). It uses
 * Electron's `process.parentPort`, not the electron module.
 */
import { parseArgs } from 'node:util';
import { Gateway } from './gateway/gateway';
import { resolveDataDir } from './gateway/data-dir';
import { createLineLogger } from './gateway/logger';
import type { MessagePipe } from '../shared/protocol';
import { HOMING_VERSION } from './version';

/** The shape of Electron's MessagePortMain that this process uses. */
interface PortMain {
  on(event: 'message', listener: (event: { data: unknown }) => void): void;
  on(event: 'close', listener: () => void): void;
  postMessage(message: unknown): void;
  start(): void;
  close(): void;
}

interface ParentPort {
  on(event: 'message', listener: (event: { data: unknown; ports: PortMain[] }) => void): void;
  postMessage(message: unknown): void;
}

function portPipe(port: PortMain): MessagePipe {
  return {
    send: (message) => port.postMessage(message),
    onMessage: (listener) => port.on('message', (event) => listener(event.data)),
    onClose: (listener) => port.on('close', listener),
    close: () => port.close(),
  };
}

const parentPort = (process as unknown as { parentPort?: ParentPort }).parentPort;
if (!parentPort) {
  process.stderr.write('gateway-host runs inside the Homing app; use `homing gateway` for the headless gateway\n');
  process.exit(2);
}

const { values } = parseArgs({ options: { 'data-dir': { type: 'string' } }, strict: false });
const logger = createLineLogger();
const gateway = Gateway.start({
  dataDir: resolveDataDir(typeof values['data-dir'] === 'string' ? values['data-dir'] : undefined),
  mode: 'app',
  version: HOMING_VERSION,
  logger,
  // The main process reports sleep from powerMonitor ('resume' messages).
  detectSleep: false,
});

parentPort.on('message', (event) => {
  const kind = (event.data as { type?: unknown } | null)?.type;
  if (kind === 'connect' && event.ports[0]) {
    const port = event.ports[0];
    gateway.api.serve(portPipe(port));
    port.start();
  } else if (kind === 'stop') {
    void gateway.stop().finally(() => process.exit(0));
  } else if (kind === 'resume') {
    void gateway.resumed(Number((event.data as { sleptMs?: unknown }).sleptMs) || 0);
  }
});
parentPort.postMessage({ type: 'ready', pid: process.pid });
