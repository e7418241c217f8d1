import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GatewayEvent } from '../../src/shared/api';
import { Gateway, type GatewayOptions } from '../../src/main/gateway/gateway';
import { createLineLogger, silentLogger, type Logger } from '../../src/main/gateway/logger';

/** An in-process gateway on a temp data directory, with its events recorded. */
export interface GatewayHarness {
  readonly gateway: Gateway;
  readonly dataDir: string;
  readonly events: GatewayEvent[];
  /** Resolves with the first event (already seen or future) that matches. */
  waitFor<T extends GatewayEvent['type']>(
    type: T,
    match?: (event: Extract<GatewayEvent, { type: T }>) => boolean,
    timeoutMs?: number,
  ): Promise<Extract<GatewayEvent, { type: T }>>;
  /** Like waitFor, but only an event emitted after this call counts. */
  waitForNext<T extends GatewayEvent['type']>(
    type: T,
    match?: (event: Extract<GatewayEvent, { type: T }>) => boolean,
    timeoutMs?: number,
  ): Promise<Extract<GatewayEvent, { type: T }>>;
  close(): Promise<void>;
}

export async function startGatewayHarness(
  config: unknown = {},
  options: Partial<GatewayOptions> & { dataDir?: string } = {},
): Promise<GatewayHarness> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'homing-gw-'));
  // `null`: no config.json at all (a first run).
  if (config !== null) writeFileSync(join(dataDir, 'config.json'), JSON.stringify(config));
  const logger: Logger = process.env.HOMING_TEST_LOG ? createLineLogger({ level: 'debug' }) : silentLogger;
  const events: GatewayEvent[] = [];
  const waiters: { type: string; match: (event: never) => boolean; resolve: (event: never) => void }[] = [];
  // No update check: a test never reaches for the network (gateway.updates.test.ts gives the check a fake feed).
  const gateway = Gateway.start({ dataDir, mode: 'headless', version: '0.0.0-test', logger, detectSleep: false, detectOllama: false, updateCheck: false, ...options });
  gateway.bus.on((event) => {
    events.push(event);
    for (const waiter of [...waiters]) {
      if (waiter.type === event.type && waiter.match(event as never)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(event as never);
      }
    }
  });
  const future = (type: string, match: (event: never) => boolean, timeoutMs: number) =>
    new Promise<GatewayEvent>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${type} event within ${timeoutMs} ms`)), timeoutMs);
      waiters.push({
        type,
        match,
        resolve: (event) => {
          clearTimeout(timer);
          resolve(event);
        },
      });
    });
  await gateway.ready;
  return {
    gateway,
    dataDir,
    events,
    waitFor(type, match = () => true, timeoutMs = 15_000) {
      const seen = events.find((event) => event.type === type && match(event as never));
      if (seen) return Promise.resolve(seen as never);
      return future(type, match as (event: never) => boolean, timeoutMs) as never;
    },
    waitForNext(type, match = () => true, timeoutMs = 15_000) {
      return future(type, match as (event: never) => boolean, timeoutMs) as never;
    },
    async close() {
      await gateway.stop(1_000);
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
