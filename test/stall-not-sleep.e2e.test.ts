import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLineLogger } from '../src/main/gateway/logger';
import { startGatewayHarness, type GatewayHarness } from './support/gateway-harness';
import { waitUntil } from './support/wait';

/**
 * The whole gateway with its own sleep detection on (headless mode): a blocked
 * event loop is a stall, not a sleep, and its time counts on the ledger's awake
 * clock (the clock that decides when an owed reply is given up).
 */
describe('a blocked event loop', () => {
  let harness: GatewayHarness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  it('is logged as a stall, not a sleep, and the awake clock counts it', async () => {
    const logged: string[] = [];
    harness = await startGatewayHarness({ delivery: { leaseSeconds: 3 } }, { detectSleep: true, logger: createLineLogger({ level: 'debug', write: (line) => logged.push(line) }) });
    const { gateway, dataDir } = harness;
    const reader = new Database(join(dataDir, 'homing.db'), { readonly: true });
    const awake = () => (reader.prepare(`SELECT value FROM ledger_meta WHERE key = 'awake_ms'`).get() as { value: number } | undefined)?.value ?? 0;
    const sweeps = () => harness!.events.filter((event) => event.type === 'sweep.completed').length;
    // The awake clock has a reading (a sweep has run since the start-up one).
    await waitUntil('a sweep after the start', () => sweeps() >= 2);
    const before = awake();

    const blockedUntil = performance.now() + 5_000;
    while (performance.now() < blockedUntil) {
      // The event loop is held: no timer, no socket, nothing runs.
    }
    const after = sweeps();
    await waitUntil('the stall logged', () => logged.some((line) => line.includes('a stall, not a sleep')), 15_000);
    await waitUntil('a sweep after the stall', () => sweeps() > after + 1);

    expect(logged.find((line) => line.includes('a stall, not a sleep'))).toMatch(/"stalledMs":(4\d{3}|5\d{3})/);
    expect(logged.some((line) => line.includes('resumed from sleep'))).toBe(false);
    expect(harness.events.some((event) => event.type === 'gateway.resumed')).toBe(false);
    expect(awake() - before).toBeGreaterThanOrEqual(5_000);
    expect(gateway.getStatus().state).toBe('running');
    reader.close();
  }, 40_000);
});
