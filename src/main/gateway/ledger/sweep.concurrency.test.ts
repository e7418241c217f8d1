import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EVERY_ROW, ManualClock, openTestDb, removeTempDirs, reply, startFixture, tempDir, testLedger } from './fixtures/test-ledger';

afterEach(removeTempDirs);

const SWEEPER = fileURLToPath(new URL('./fixtures/sweeper.ts', import.meta.url));
const ROWS = 10_000;

describe('two gateways sweeping one database at once', () => {
  it('claim every one of 10 000 owed rows exactly once', async () => {
    const file = join(tempDir(), 'homing.db');
    const db = openTestDb(file);
    // 10 000 rows recorded by a gateway that then stopped: all recoverable. Each
    // is alone in its conversation (reply(n) is chat-n), so each is the head of its outbox.
    const crashed = testLedger(db, new ManualClock(Date.now() - 60_000));
    db.transaction(() => {
      for (let n = 0; n < ROWS; n++) crashed.recordObligation(reply(n));
    })();
    crashed.stop();
    db.close();

    const sweepers = [startFixture(SWEEPER, [file, '100']), startFixture(SWEEPER, [file, '100'])];
    await Promise.all(sweepers.map((child) => child.waitForLine((line) => line === 'ready')));
    for (const child of sweepers) child.process.stdin!.write('go\n');
    const results = await Promise.all(
      sweepers.map(async (child) => JSON.parse(await child.waitForLine((text) => text.startsWith('{'))) as { instance: string; claimed: string[]; lostRaces: number }),
    );
    // Both are done: now they may exit (before, one gone would hand its rows to the other).
    for (const child of sweepers) child.process.stdin!.end();
    for (const child of sweepers) {
      const { code, stderr } = await child.exited;
      expect(code, stderr).toBe(0);
    }

    const all = results.flatMap((result) => result.claimed);
    expect(all).toHaveLength(ROWS);
    expect(new Set(all).size).toBe(ROWS);
    // The race was real: a process lost compare-and-swaps to the other one, or
    // both claimed rows (SQLite's lock is not fair, so either can happen).
    const raced = results.some((result) => result.lostRaces > 0) || results.every((result) => result.claimed.length > 0);
    expect(raced, JSON.stringify(results.map((result) => ({ claimed: result.claimed.length, lost: result.lostRaces })))).toBe(true);
    // The database agrees with them.
    const check = openTestDb(file);
    const rows = check.prepare(`SELECT owner_instance AS owner, attempts, state FROM ${EVERY_ROW}`).all() as {
      owner: string;
      attempts: number;
      state: string;
    }[];
    // A claim spends no attempt.
    expect(rows.every((row) => row.attempts === 0 && row.state === 'attempting')).toBe(true);
    for (const result of results) {
      expect(rows.filter((row) => row.owner === result.instance)).toHaveLength(result.claimed.length);
    }
    check.close();
  }, 60_000);
});
