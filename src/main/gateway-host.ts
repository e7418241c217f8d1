/**
 * The gateway process under the tray app: an Electron utilityProcess started by
 * the supervisor in the main process. It holds the gateway core and serves the
 * API on each MessagePort the main process hands over (one per window). It uses
 * Electron's `process.parentPort`, not the electron module.
 */
import { parseArgs } from 'node:util';
import type { UpdateNotice } from '../shared/api';
import { Gateway } from './gateway/gateway';
import { DataDirLocked } from './gateway/data-dir-lock';
import { resolveDataDir } from './gateway/data-dir';
import { createLineLogger } from './gateway/logger';
import { keepRunningOnUnhandledRejections } from './gateway/process-guard';
import type { SecretStore } from './gateway/secrets/secret-store';
import { ParentSecretStore } from './parent-secret-store';
import { messagePortPipe, type MessagePortLike } from './port-pipe';
import { HOMING_VERSION } from './version';

/** The shape of Electron's MessagePortMain that this process uses. */
interface PortMain extends MessagePortLike {
  start(): void;
}

interface ParentPort {
  on(event: 'message', listener: (event: { data: unknown; ports: PortMain[] }) => void): void;
  postMessage(message: unknown): void;
}

const parentPort = (process as unknown as { parentPort?: ParentPort }).parentPort;
if (!parentPort) {
  process.stderr.write('gateway-host runs inside the Homing app; use `npx homing gateway` for the headless gateway\n');
  process.exit(2);
}

const { values } = parseArgs({
  options: { 'data-dir': { type: 'string' }, 'secrets-from-parent': { type: 'boolean' } },
  strict: false,
});
const logger = createLineLogger();
keepRunningOnUnhandledRejections(logger);
let gateway: Gateway | undefined;
/** Ports handed over before the gateway started (it waits for its secrets). */
const waitingPorts: PortMain[] = [];

function serve(port: PortMain): void {
  if (!gateway) {
    waitingPorts.push(port);
    return;
  }
  gateway.api.serve(messagePortPipe(port));
  port.start();
}

function start(secrets?: SecretStore): void {
  if (gateway) return;
  try {
    gateway = Gateway.start({
      dataDir: resolveDataDir(typeof values['data-dir'] === 'string' ? values['data-dir'] : undefined),
      mode: 'app',
      version: HOMING_VERSION,
      logger,
      ...(secrets ? { secrets } : {}),
      // The main process reports sleep from powerMonitor ('resume' messages).
      detectSleep: false,
    });
  } catch (error) {
    // Another gateway (a headless one) holds the data directory: say so in the
    // log the tray shows, and stop; the supervisor gives up visibly after retries.
    if (error instanceof DataDirLocked) {
      logger.error(error.message);
      parentPort?.postMessage({ type: 'locked', message: error.message });
      process.exit(2);
    }
    throw error;
  }
  for (const port of waitingPorts.splice(0)) serve(port);
}

// With safeStorage the main process holds the secrets and sends them first
// (safe-secrets.ts says why); otherwise the gateway reads its own 0600 file.
if (values['secrets-from-parent'] !== true) start();

parentPort.on('message', (event) => {
  const data = event.data as { type?: unknown; values?: unknown; sleptMs?: unknown; update?: unknown } | null;
  const kind = data?.type;
  if (kind === 'connect' && event.ports[0]) {
    serve(event.ports[0]);
  } else if (kind === 'secrets') {
    const given = typeof data?.values === 'object' && data.values !== null ? (data.values as Record<string, unknown>) : {};
    start(new ParentSecretStore(given, (message) => parentPort.postMessage(message)));
  } else if (kind === 'stop') {
    if (!gateway) process.exit(0);
    void gateway.stop().finally(() => process.exit(0));
  } else if (kind === 'resume') {
    void gateway?.resumed(Number(data?.sleptMs) || 0);
  } else if (kind === 'update') {
    gateway?.setUpdate(updateNoticeOf(data?.update));
  }
});

/** The `update` message's notice (gateway-control.ts's HostMessage), or null for anything else. */
function updateNoticeOf(value: unknown): UpdateNotice | null {
  if (typeof value !== 'object' || value === null) return null;
  const { version, url, ready } = value as Record<string, unknown>;
  if (typeof version !== 'string' || typeof url !== 'string' || version.length > 100 || !url.startsWith('https://')) return null;
  return { version, url, ready: ready === true };
}
parentPort.postMessage({ type: 'ready', pid: process.pid });
