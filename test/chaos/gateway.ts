import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import type { DeliveryPage, DeliveryRow, DeliveryState } from '../../src/shared/api';
import { HOMING_BIN } from '../support/gateway-process';

/** One run of the built headless gateway (`homing gateway`), its output appended to a log file. */
export interface ChaosGateway {
  readonly child: ChildProcess;
  /** When the process was spawned (ms). */
  readonly spawnedAt: number;
  /** When it printed its URL (ms). */
  readonly readyAt: number;
  readonly exited: Promise<void>;
}

export interface GatewayPaths {
  readonly dataDir: string;
  readonly configFile: string;
  readonly logFile: string;
}

/** Every gateway this harness started and that may still run, for the last-resort cleanup. */
export const liveGateways = new Set<ChildProcess>();

/**
 * Starts the gateway and waits for its URL: up to a minute, for a loaded CI
 * machine (a start takes ~1 s on a quiet one; how fast a new gateway takes over
 * is measured by the run, not judged here).
 */
export async function startGateway(paths: GatewayPaths, env: NodeJS.ProcessEnv = {}, timeoutMs = 60_000): Promise<ChaosGateway> {
  const log: WriteStream = createWriteStream(paths.logFile, { flags: 'a' });
  log.on('error', () => {});
  const spawnedAt = Date.now();
  log.write(`\n===== chaos: gateway spawned at ${new Date(spawnedAt).toISOString()}\n`);
  const child = spawn(process.execPath, [HOMING_BIN, 'gateway', '--data-dir', paths.dataDir, '--config', paths.configFile, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, HOMING_NO_UPDATE_CHECK: '1', ...env },
  });
  liveGateways.add(child);
  const exited = new Promise<void>((resolve) =>
    child.once('close', () => {
      liveGateways.delete(child);
      log.end();
      resolve();
    }),
  );
  child.on('error', (error) => log.write(`chaos: spawn error ${String(error)}\n`));
  let seen = '';
  child.stderr!.on('data', (data: Buffer) => log.write(data));
  const ready = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the gateway printed no URL in ${timeoutMs} ms (see ${paths.logFile})`)), timeoutMs);
    child.stdout!.on('data', (data: Buffer) => {
      log.write(data);
      if (seen.length < 10_000) seen += data.toString();
      if (/Open the window: http:\/\/127\.0\.0\.1:\d+\//.test(seen)) {
        clearTimeout(timer);
        resolve(Date.now());
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`the gateway exited (${child.exitCode ?? child.signalCode}) before printing its URL (see ${paths.logFile})`));
    });
  });
  try {
    const readyAt = await ready;
    return { child, spawnedAt, readyAt, exited };
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    throw error;
  }
}

/** SIGKILL: nothing in the gateway runs after it. Resolves once the process is gone. */
export async function killGateway(gateway: ChaosGateway): Promise<void> {
  if (gateway.child.exitCode === null && gateway.child.signalCode === null) gateway.child.kill('SIGKILL');
  await gateway.exited;
}

/** SIGTERM, then SIGKILL if it has not stopped after `graceMs`. Returns whether it stopped by itself. */
export async function stopGateway(gateway: ChaosGateway, graceMs = 15_000): Promise<boolean> {
  if (gateway.child.exitCode !== null || gateway.child.signalCode !== null) return true;
  gateway.child.kill('SIGTERM');
  let timer: ReturnType<typeof setTimeout> | undefined;
  const clean = await Promise.race([gateway.exited.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), graceMs)))]);
  clearTimeout(timer);
  if (!clean) await killGateway(gateway);
  return clean;
}

/** `homing deliveries list --json --state S`, every page by `--after` (the CLI reads homing.db without a running gateway). */
export async function listDeliveries(dataDir: string, state: DeliveryState): Promise<DeliveryRow[]> {
  const rows: DeliveryRow[] = [];
  let after: string | null = null;
  for (let page = 1; page <= 1_000; page++) {
    const out = await homingCli(['deliveries', 'list', '--json', '--state', state, ...(after ? ['--after', after] : []), '--data-dir', dataDir]);
    const parsed = JSON.parse(out) as DeliveryPage;
    rows.push(...parsed.deliveries);
    after = parsed.nextCursor;
    if (!after) break;
  }
  return rows;
}

/** How many rows are in a state (one CLI call). */
export async function countDeliveries(dataDir: string, state: DeliveryState): Promise<number> {
  const out = await homingCli(['deliveries', 'list', '--json', '--state', state, '--data-dir', dataDir]);
  return (JSON.parse(out) as DeliveryPage).total;
}

function homingCli(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [HOMING_BIN, ...args], { timeout: 30_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`homing ${args.join(' ')}: ${String(error)}\n${stderr}`));
      else resolve(stdout);
    });
  });
}
