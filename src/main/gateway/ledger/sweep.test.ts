import { afterEach, describe, expect, it } from 'vitest';
import type { Db } from '../db/database';
import type { Ledger } from './ledger';
import type { LedgerPolicy } from './policy';
import { OWED, OWED_ROWS } from './states';
import { claim, IRC, ManualClock, MATRIX, openTestDb, removeTempDirs, reply, replyIn, sendAll, testLedger } from './fixtures/test-ledger';

afterEach(removeTempDirs);

const RESET = { error: 'connection reset', retryable: true, permanent: false } as const;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

function setup(policy: Partial<LedgerPolicy> = {}) {
  const db = openTestDb();
  const clock = new ManualClock();
  const ledger = testLedger(db, clock, { policy });
  return { db, clock, ledger, policy };
}

/** Records a row as a gateway that then crashed (its instance is dead). */
function orphan(db: Db, clock: ManualClock, n: number, platform = 'irc', chunks = 1): string {
  const crashed = testLedger(db, clock);
  const input = reply(n, platform, chunks);
  crashed.recordObligation(input);
  crashed.stop();
  return input.obligationId;
}

function sweep(ledger: Ledger, clock: ManualClock, platforms = [IRC]) {
  return ledger.sweepRecoverable({ now: clock.now(), deliverablePlatforms: platforms });
}

describe('the sweep', () => {
  it('claims a dead owner’s row once, spending no attempt, and leaves a live owner’s row alone', () => {
    const { db, clock, ledger } = setup();
    const orphaned = orphan(db, clock, 1);
    const alive = testLedger(db, clock);
    alive.recordObligation(reply(2));

    const outcome = sweep(ledger, clock);
    expect(outcome.claimed).toHaveLength(1);
    expect(outcome.claimed[0]).toMatchObject({ id: orphaned, attempts: 0, needsMarker: false, firstChunk: { index: 0 } });
    expect(outcome.claimed[0]!.receipt).toMatchObject({ id: orphaned, owner: ledger.instanceId });
    expect(ledger.getDelivery(orphaned)).toMatchObject({ state: 'attempting', attempts: 0 });
    expect(sweep(ledger, clock).claimed).toEqual([]);
    expect(ledger.getDelivery(reply(2).obligationId)).toMatchObject({ state: 'pending', attempts: 0 });
  });

  it('abandons a row whose failed sends reached the attempt cap (lowered by a config reload)', () => {
    const { db, clock, ledger } = setup();
    const id = orphan(db, clock, 1);
    for (let attempt = 1; attempt <= 3; attempt++) {
      const [held] = sweep(ledger, clock).claimed;
      expect(held).toMatchObject({ id, attempts: attempt - 1 });
      ledger.markFailed(held!.receipt, RESET);
      ledger.letGo(id);
      clock.advance(HOUR);
    }
    ledger.setPolicy({ maxAttempts: 3 });
    const outcome = sweep(ledger, clock);
    expect(outcome.claimed).toEqual([]);
    expect(outcome.report.abandoned).toBe(1);
    expect(ledger.getDelivery(id)).toMatchObject({ state: 'abandoned', attempts: 3, abandonReason: 'attempt cap: 3 failed attempts' });
  });

  it('abandons a row still owed after the stale cutoff of time the gateway was running, even if never tried', () => {
    const { db, clock, ledger } = setup({ staleAfterMs: 10 * MINUTE, maxCreditMs: 2 * MINUTE });
    const id = orphan(db, clock, 1, 'matrix');
    const states: string[] = [];
    for (let minute = 0; minute <= 11; minute++) {
      sweep(ledger, clock, [IRC]);
      states.push(ledger.getDelivery(id)!.state);
      clock.advance(MINUTE);
    }
    // Owed 10 minutes of running time at the 11th sweep.
    expect(states.slice(0, 10)).toEqual(Array(10).fill('pending'));
    expect(states[10]).toBe('abandoned');
    expect(ledger.getDelivery(id)).toMatchObject({ state: 'abandoned', attempts: 0, abandonReason: 'stale: still owed after 10 min' });
  });

  it('a long sleep or a clock jump does not abandon a row that was never tried', () => {
    const { db, clock, ledger } = setup();
    const id = orphan(db, clock, 1);
    sweep(ledger, clock, []);
    clock.advance(30 * HOUR); // the laptop slept; or the clock jumped
    const outcome = sweep(ledger, clock, [IRC]);
    expect(outcome.report.abandoned).toBe(0);
    expect(outcome.claimed.map((claim) => claim.id)).toEqual([id]);
  });

  it('a clock set back credits no owed time', () => {
    const { db, clock, ledger } = setup({ staleAfterMs: 10 * MINUTE, maxCreditMs: 5 * MINUTE });
    const id = orphan(db, clock, 1, 'matrix');
    sweep(ledger, clock, []);
    clock.advance(-5 * HOUR);
    sweep(ledger, clock, []);
    clock.advance(4 * MINUTE);
    sweep(ledger, clock, []);
    const owed = db
      .prepare(`SELECT (SELECT value FROM ledger_meta WHERE key = 'awake_ms') - owed_since_awake AS ms FROM ledger_outbox WHERE id = ?`)
      .get(id);
    expect(owed).toEqual({ ms: 4 * MINUTE });
  });

  it('leaves out time measured as suspended, and counts the rest (a stall is awake time)', () => {
    const { db, clock, ledger } = setup({ staleAfterMs: 10 * MINUTE, maxCreditMs: 5 * MINUTE });
    const id = orphan(db, clock, 1, 'matrix');
    sweep(ledger, clock, []);
    // Four minutes pass between two sweeps, three of them with the machine suspended.
    clock.advance(4 * MINUTE);
    ledger.sweepRecoverable({ now: clock.now(), deliverablePlatforms: [], suspendedMs: 3 * MINUTE });
    // A stall: two minutes with no suspension measured.
    clock.advance(2 * MINUTE);
    ledger.sweepRecoverable({ now: clock.now(), deliverablePlatforms: [], suspendedMs: 0 });
    const owed = db
      .prepare(`SELECT (SELECT value FROM ledger_meta WHERE key = 'awake_ms') - owed_since_awake AS ms FROM ledger_outbox WHERE id = ?`)
      .get(id);
    expect(owed).toEqual({ ms: 3 * MINUTE });
  });

  it('a platform that is not connected keeps its row’s attempt budget, and the row is delivered once it returns', () => {
    const { db, clock, ledger } = setup();
    const id = orphan(db, clock, 1, 'matrix');
    for (let sweeps = 0; sweeps < 10; sweeps++) {
      const outcome = sweep(ledger, clock, [IRC]);
      expect(outcome.claimed).toEqual([]);
      expect(outcome.report).toMatchObject({ waitingForPlatform: 1, owed: 1 });
      clock.advance(MINUTE);
    }
    expect(ledger.getDelivery(id)).toMatchObject({ state: 'pending', attempts: 0 });

    const outcome = sweep(ledger, clock, [IRC, MATRIX]);
    expect(outcome.claimed).toMatchObject([{ id, attempts: 0, target: { platform: 'matrix' } }]);
    sendAll(ledger, outcome.claimed[0]!);
    expect(ledger.getDelivery(id)).toMatchObject({ state: 'delivered', attempts: 0 });
  });

  it('retries a failed row after its backoff, and never retries a permanent failure', () => {
    const { db, clock, ledger } = setup();
    const retryable = orphan(db, clock, 1);
    const permanent = orphan(db, clock, 2);
    const claims = new Map(sweep(ledger, clock).claimed.map((held) => [held.id, held]));
    expect(claims.size).toBe(2);
    ledger.markFailed(claims.get(retryable)!.receipt, RESET);
    ledger.markFailed(claims.get(permanent)!.receipt, { error: '403 bot was blocked by the user', retryable: false, permanent: true });
    ledger.letGo(retryable);
    ledger.letGo(permanent);

    clock.advance(ledger.policy.backoffBaseMs - 1);
    expect(sweep(ledger, clock).claimed).toEqual([]);
    clock.advance(1);
    const [second] = sweep(ledger, clock).claimed;
    expect(second).toMatchObject({ id: retryable, attempts: 1 });
    ledger.markFailed(second!.receipt, RESET);
    ledger.letGo(retryable);
    // The backoff doubles.
    expect(ledger.getDelivery(retryable)!.nextAttemptAt).toBe(clock.now() + 2 * ledger.policy.backoffBaseMs);

    clock.advance(HOUR);
    const later = sweep(ledger, clock);
    expect(later.claimed.map((held) => held.id)).toEqual([retryable]);
    expect(ledger.getDelivery(permanent)).toMatchObject({ state: 'failed', attempts: 1, nextAttemptAt: null });
  });

  it('honours the platform’s retry-after when it is longer than the backoff', () => {
    const { db, clock, ledger } = setup();
    const id = orphan(db, clock, 1);
    const [held] = sweep(ledger, clock).claimed;
    ledger.markFailed(held!.receipt, { error: '429 Too Many Requests: retry after 60', retryable: true, retryAfterMs: 60_000, permanent: false });
    ledger.letGo(id);
    clock.advance(59_999);
    expect(sweep(ledger, clock).claimed).toEqual([]);
    clock.advance(1);
    expect(sweep(ledger, clock).claimed.map((held) => held.id)).toEqual([id]);
  });

  it('prunes delivered rows after the retention period and never deletes an owed row', () => {
    const { db, clock, ledger } = setup({ retentionMs: 7 * 24 * HOUR });
    const delivered = reply(1);
    ledger.recordObligation(delivered);
    sendAll(ledger, claim(ledger, delivered.obligationId));
    const owed = orphan(db, clock, 2, 'matrix'); // waits for a platform that never connects
    const failedForGood = orphan(db, clock, 3);
    const [held] = sweep(ledger, clock).claimed;
    ledger.markFailed(held!.receipt, { error: 'chat not found', retryable: false, permanent: true });

    clock.advance(7 * 24 * HOUR);
    expect(sweep(ledger, clock, []).report.pruned).toBe(0);
    clock.advance(1);
    expect(sweep(ledger, clock, []).report.pruned).toBe(1);
    expect(ledger.getDelivery(delivered.obligationId)).toBeUndefined();
    expect(ledger.chunks(delivered.obligationId)).toEqual([]);
    expect(ledger.getDelivery(owed)).toMatchObject({ state: 'pending' });
    expect(ledger.getDelivery(failedForGood)).toMatchObject({ state: 'failed' });
  });

  it('settles a row whose every chunk was confirmed before its owner died, without sending again', () => {
    const { db, clock, ledger } = setup();
    const crashed = testLedger(db, clock);
    const input = reply(1, 'irc', 2);
    crashed.recordObligation(input);
    const { receipt } = claim(crashed, input.obligationId);
    crashed.markChunkDelivered(receipt, 0, 'a');
    crashed.markChunkDelivered(receipt, 1, 'b');
    crashed.stop();
    expect(sweep(ledger, clock).claimed).toEqual([]);
    expect(ledger.getDelivery(input.obligationId)).toMatchObject({ state: 'delivered', attempts: 0, chunksDelivered: 2 });
  });

  it('reads and writes owed rows only through the owed index, so its cost follows what is owed, not the table', () => {
    const { db, clock, ledger } = setup();
    const plan = (sql: string) => {
      const named = Object.fromEntries([...sql.matchAll(/@(\w+)/g)].map((match) => [match[1]!, null]));
      const positional = Array<null>((sql.match(/\?/g) ?? []).length).fill(null);
      const args = Object.keys(named).length > 0 ? [named, ...positional] : positional;
      return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[]).map((row) => row.detail).join(' | ');
    };
    // SQLite can serve OWED with the owed index (INDEXED BY fails to prepare otherwise), and only OWED.
    expect(plan(`SELECT count(*) FROM ${OWED_ROWS} WHERE ${OWED}`)).toMatch(/INDEX ledger_outbox_owed/);
    expect(() => db.prepare(`SELECT id FROM ${OWED_ROWS} WHERE state = 'abandoned'`)).toThrow(/no query solution/);
    // Every statement a real sweep prepares over the outbox or the history is served by an index or
    // the key, never a full scan — but the move of delivered rows, which reads the outbox whole when
    // this process has delivered some (or on its first sweep: what a predecessor left).
    for (let n = 1; n <= 3; n++) orphan(db, clock, n);
    ledger.sweepRecoverable({ now: clock.now(), deliverablePlatforms: [] }); // the first sweep (it moves)
    const prepared: string[] = [];
    const prepare = db.prepare.bind(db);
    db.prepare = ((sql: string) => {
      prepared.push(sql);
      return prepare(sql);
    }) as typeof db.prepare;
    try {
      expect(sweep(ledger, clock).claimed).toHaveLength(3);
    } finally {
      db.prepare = prepare;
    }
    const overReplies = prepared.filter((sql) => /\bledger_(outbox|history)\b/.test(sql));
    expect(overReplies.length).toBeGreaterThanOrEqual(4);
    for (const sql of overReplies) expect(plan(sql), sql).not.toMatch(/SCAN ledger_(outbox|history)(?! USING)/);
  });

  it('keeps the owed count between sweeps, and counts again once a ledger here or another connection changed a row', () => {
    const { db, clock, ledger } = setup();
    for (let n = 1; n <= 3; n++) ledger.recordObligation(reply(n));
    const counts: string[] = [];
    const prepare = db.prepare.bind(db);
    db.prepare = ((sql: string) => {
      const statement = prepare(sql);
      if (!/SELECT count\(\*\) AS n FROM ledger_outbox INDEXED BY ledger_outbox_owed/.test(sql)) return statement;
      const get = statement.get.bind(statement) as (...args: unknown[]) => unknown;
      (statement as unknown as Record<string, unknown>).get = (...args: unknown[]) => {
        counts.push(sql);
        return get(...args);
      };
      return statement;
    }) as typeof db.prepare;
    try {
      expect(sweep(ledger, clock, []).report.owed).toBe(3);
      expect(sweep(ledger, clock, []).report.owed).toBe(3);
      expect(ledger.owedCount()).toBe(3);
      expect(counts).toHaveLength(1);
      // A change through a ledger on this connection…
      testLedger(db, clock).recordObligation(reply(4));
      expect(ledger.owedCount()).toBe(4);
      // …and a commit on another connection are seen.
      const other = openTestDb(db.name);
      testLedger(other, clock).recordObligation(reply(5));
      other.close();
      expect(sweep(ledger, clock, []).report.owed).toBe(5);
      expect(counts).toHaveLength(3);
    } finally {
      db.prepare = prepare;
    }
  });

  it('reads no row of a live instance elsewhere, and counts what is owed on the owed index', () => {
    const { db, clock, ledger } = setup();
    const alive = testLedger(db, clock);
    for (let n = 1; n <= 20; n++) alive.recordObligation(reply(n));
    const orphaned = orphan(db, clock, 21);
    const read: string[] = [];
    const prepare = db.prepare.bind(db);
    db.prepare = ((sql: string) => {
      const statement = prepare(sql);
      if (!/^SELECT/.test(sql.trim()) || !/FROM ledger_outbox/.test(sql)) return statement;
      for (const method of ['all', 'get'] as const) {
        const call = statement[method].bind(statement) as (...args: unknown[]) => unknown;
        (statement as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
          const result = call(...args);
          for (const row of ([] as unknown[]).concat(result ?? [])) if (row && typeof row === 'object' && 'id' in row) read.push(String(row.id));
          return result;
        };
      }
      return statement;
    }) as typeof db.prepare;
    let outcome;
    try {
      outcome = sweep(ledger, clock);
    } finally {
      db.prepare = prepare;
    }
    expect(outcome.claimed.map((row) => row.id)).toEqual([orphaned]);
    expect(outcome.report.owed).toBe(21);
    const liveIds = new Set(Array.from({ length: 20 }, (_, i) => reply(i + 1).obligationId));
    expect(read.filter((id) => liveIds.has(id))).toEqual([]);
  });

  it('takes a row whose owner has no instance row at all (pruned by an older Homing) on its first sweep', () => {
    const { db, clock, ledger } = setup();
    const crashed = testLedger(db, clock);
    crashed.recordObligation(reply(1));
    db.prepare('DELETE FROM ledger_instances WHERE id = ?').run(crashed.instanceId);
    expect(sweep(ledger, clock).claimed.map((row) => row.id)).toEqual([reply(1).obligationId]);
  });

  it('keeps an instance that still owns an unsettled row when it prunes old ones', () => {
    const { db, clock, ledger } = setup({ retentionMs: HOUR });
    const owner = testLedger(db, clock);
    owner.recordObligation(reply(1));
    owner.stop();
    const idle = testLedger(db, clock);
    idle.stop();
    clock.advance(2 * HOUR);
    sweep(ledger, clock, []);
    const left = (db.prepare('SELECT id FROM ledger_instances').all() as { id: string }[]).map((row) => row.id);
    expect(left).toContain(owner.instanceId);
    expect(left).not.toContain(idle.instanceId);
  });

  it('claims only the head of each conversation’s outbox, in (conversation, sequence) order, and the next once the head is settled', () => {
    const { db, clock, ledger } = setup();
    const crashed = testLedger(db, clock);
    const ids = [replyIn('bob', 1), replyIn('alice', 2), replyIn('bob', 3), replyIn('alice', 4)].map((input) => crashed.recordObligation(input).row.id);
    crashed.stop();
    const [bob1, alice2, bob3, alice4] = ids as [string, string, string, string];
    const first = sweep(ledger, clock).claimed;
    // seq: the row's number, in recording order across conversations.
    expect(first.map((held) => [held.id, held.seq])).toEqual([
      [alice2, 2],
      [bob1, 1],
    ]);
    expect(ledger.markAttempting(bob3)).toMatchObject({ ok: false, reason: 'behind-earlier-reply' });
    sendAll(ledger, first[1]!);
    expect(sweep(ledger, clock).claimed.map((held) => held.id)).toEqual([bob3]);
    expect(ledger.getDelivery(alice4)).toMatchObject({ state: 'pending' });
  });

  it('skips rows this process is sending, and rows of a live owner elsewhere', () => {
    const { db, clock, ledger } = setup();
    const mine = ledger.recordObligation(reply(1)).row.id;
    const held = claim(ledger, mine);
    testLedger(db, clock).recordObligation(reply(2));
    expect(sweep(ledger, clock).claimed).toEqual([]);
    ledger.release(held.receipt);
    expect(sweep(ledger, clock).claimed).toEqual([]);
    ledger.letGo(mine);
    expect(sweep(ledger, clock).claimed.map((claimed) => claimed.id)).toEqual([mine]);
  });
});
