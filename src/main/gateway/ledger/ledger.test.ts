import { afterEach, describe, expect, it } from 'vitest';
import type { DeliveryRow } from '../../../shared/api';
import { ManualClock, openTestDb, removeTempDirs, reply, testLedger } from './fixtures/test-ledger';

afterEach(removeTempDirs);

function setup() {
  const db = openTestDb();
  const clock = new ManualClock();
  const events: DeliveryRow[] = [];
  const ledger = testLedger(db, clock, { onChange: (row) => events.push(row) });
  return { db, clock, ledger, events };
}

describe('the delivery state machine', () => {
  it('goes pending → attempting → delivered, counting chunks, with an event at every change', () => {
    const { ledger, clock, events } = setup();
    const input = reply(1, 'irc', 2);
    const recorded = ledger.recordObligation(input);
    expect(recorded.created).toBe(true);
    expect(recorded.row).toMatchObject({ id: input.obligationId, state: 'pending', attempts: 0, chunksTotal: 2, chunksDelivered: 0 });

    clock.advance(10);
    expect(ledger.markAttempting(input.obligationId)).toEqual({ ok: true, attempts: 1 });
    expect(ledger.markChunkSending(input.obligationId, 0)).toEqual({ ok: true });
    expect(ledger.chunks(input.obligationId).map((chunk) => chunk.state)).toEqual(['sending', 'owed']);
    expect(ledger.markChunkDelivered(input.obligationId, 0, 'pm-1')).toEqual({ ok: true });
    expect(ledger.markChunkDelivered(input.obligationId, 0, 'pm-1')).toEqual({ ok: false, reason: 'no-change' });
    expect(ledger.markChunkDelivered(input.obligationId, 1, 'pm-2')).toEqual({ ok: true });
    expect(ledger.markDelivered(input.obligationId)).toEqual({ ok: true });

    const row = ledger.getDelivery(input.obligationId)!;
    expect(row).toMatchObject({ state: 'delivered', attempts: 1, chunksDelivered: 2, chunksTotal: 2, lastError: null });
    expect(row.updatedAt).toBe(clock.now());
    expect(row.createdAt).toBe(clock.now() - 10);
    expect(events.map((event) => `${event.state}:${event.chunksDelivered}`)).toEqual([
      'pending:0',
      'attempting:0',
      'attempting:1',
      'attempting:2',
      'delivered:2',
    ]);
    expect(ledger.chunks(input.obligationId).map((chunk) => chunk.platformMessageId)).toEqual(['pm-1', 'pm-2']);
  });

  it('re-recording the same turn and content changes nothing and never resets a delivered row', () => {
    const { ledger, db } = setup();
    const input = reply(2);
    ledger.recordObligation(input);
    ledger.markAttempting(input.obligationId);
    ledger.markDelivered(input.obligationId);

    const again = ledger.recordObligation({ ...input, chunks: ['different', 'split'] });
    expect(again.created).toBe(false);
    expect(again.row.state).toBe('delivered');
    expect(db.prepare('SELECT count(*) AS n FROM ledger_obligations').get()).toEqual({ n: 1 });
    expect(ledger.chunks(input.obligationId)).toHaveLength(1);
    expect(ledger.markAttempting(input.obligationId)).toEqual({ ok: false, reason: 'not-owed', state: 'delivered' });
    expect(ledger.markDelivered(input.obligationId)).toEqual({ ok: false, reason: 'already-delivered' });
  });

  it('a row another live instance owns cannot be started here', () => {
    const { db, clock, ledger } = setup();
    const other = testLedger(db, clock);
    const input = reply(3);
    other.recordObligation(input);
    expect(ledger.markAttempting(input.obligationId)).toEqual({ ok: false, reason: 'owned-elsewhere', state: 'pending' });
    expect(ledger.markAttempting('000000000000000000000000')).toEqual({ ok: false, reason: 'not-found' });
  });

  it('a retryable failure schedules the next attempt with backoff; a permanent one is never retried', () => {
    const { ledger, clock } = setup();
    const retryable = reply(4);
    ledger.recordObligation(retryable);
    ledger.markAttempting(retryable.obligationId);
    const failed = ledger.markFailed(retryable.obligationId, { error: 'timeout', retryable: true, permanent: false });
    expect(failed).toEqual({ ok: true, state: 'failed', nextAttemptAt: clock.now() + ledger.policy.backoffBaseMs });
    expect(ledger.getDelivery(retryable.obligationId)).toMatchObject({ state: 'failed', lastError: 'timeout' });

    const permanent = reply(5);
    ledger.recordObligation(permanent);
    ledger.markAttempting(permanent.obligationId);
    expect(ledger.markFailed(permanent.obligationId, { error: 'bot was blocked', retryable: false, permanent: true })).toEqual({
      ok: true,
      state: 'failed',
      nextAttemptAt: null,
    });
    expect(ledger.getDelivery(permanent.obligationId)).toMatchObject({ lastError: 'permanent: bot was blocked', nextAttemptAt: null });
    expect(ledger.markAttempting(permanent.obligationId)).toMatchObject({ ok: false, reason: 'not-owed' });
    // markFailed only applies to an attempt in progress.
    expect(ledger.markFailed(permanent.obligationId, { error: 'x', retryable: true, permanent: false })).toEqual({
      ok: false,
      reason: 'not-attempting',
    });
  });

  it('the attempt that reaches the cap abandons the row with a reason', () => {
    const { ledger } = setup();
    const input = reply(6);
    ledger.recordObligation(input);
    const results = [];
    for (let attempt = 1; attempt <= 5; attempt++) {
      expect(ledger.markAttempting(input.obligationId)).toEqual({ ok: true, attempts: attempt });
      results.push(ledger.markFailed(input.obligationId, { error: `e${attempt}`, retryable: true, permanent: false }));
    }
    expect(results.map((result) => result.ok && result.state)).toEqual(['failed', 'failed', 'failed', 'failed', 'abandoned']);
    expect(ledger.getDelivery(input.obligationId)).toMatchObject({ state: 'abandoned', abandonReason: 'gave up after 5 attempts', attempts: 5 });
  });

  it('the platform refusing a chunk outright puts it back to owed (it did not arrive)', () => {
    const { ledger } = setup();
    const input = reply(7);
    ledger.recordObligation(input);
    ledger.markAttempting(input.obligationId);
    ledger.markChunkSending(input.obligationId, 0);
    expect(ledger.markChunkUnsent(input.obligationId, 0)).toEqual({ ok: true });
    expect(ledger.chunks(input.obligationId)[0]!.state).toBe('owed');
    expect(ledger.markChunkUnsent(input.obligationId, 9)).toEqual({ ok: false, reason: 'not-found' });
  });

  it('retry makes a failed or abandoned row owed again with a fresh budget; discard abandons an owed row', () => {
    const { ledger } = setup();
    const input = reply(8);
    ledger.recordObligation(input);
    ledger.markAttempting(input.obligationId);
    expect(ledger.retryDelivery(input.obligationId)).toMatchObject({ ok: false, reason: 'conflict' });
    ledger.markFailed(input.obligationId, { error: 'chat gone', retryable: false, permanent: true });
    const retried = ledger.retryDelivery(input.obligationId);
    expect(retried).toMatchObject({ ok: true, row: { state: 'pending', attempts: 0, nextAttemptAt: null } });

    expect(ledger.discardDelivery(input.obligationId)).toMatchObject({ ok: true, row: { state: 'abandoned', abandonReason: 'discarded by the user' } });
    expect(ledger.discardDelivery(input.obligationId)).toMatchObject({ ok: true, row: { state: 'abandoned' } });
    expect(ledger.retryDelivery('0'.repeat(24))).toMatchObject({ ok: false, reason: 'not-found' });

    const delivered = reply(9);
    ledger.recordObligation(delivered);
    ledger.markDelivered(delivered.obligationId);
    expect(ledger.discardDelivery(delivered.obligationId)).toMatchObject({ ok: false, reason: 'conflict' });
  });

  it('lists newest first, by state, in pages of 50', () => {
    const { ledger, clock } = setup();
    for (let n = 0; n < 60; n++) {
      clock.advance(1);
      ledger.recordObligation(reply(100 + n));
    }
    ledger.markDelivered(reply(100).obligationId);
    const first = ledger.listDeliveries();
    expect(first.deliveries).toHaveLength(50);
    expect(first.hasMore).toBe(true);
    expect(first.deliveries[0]!.id).toBe(reply(159).obligationId);
    expect(ledger.listDeliveries({ page: 2 }).deliveries).toHaveLength(10);
    expect(ledger.listDeliveries({ state: 'delivered' }).deliveries.map((row) => row.id)).toEqual([reply(100).obligationId]);
    expect(Object.keys(first.deliveries[0]!)).toEqual(
      expect.arrayContaining(['id', 'state', 'platform', 'chatId', 'threadId', 'sessionKey', 'attempts', 'chunksDelivered', 'chunksTotal', 'lastError', 'createdAt', 'updatedAt']),
    );
  });
});

describe('stateCounts', () => {
  it('counts owed, retried, permanently failed, abandoned, discarded and recently delivered rows apart', () => {
    const { ledger, clock } = setup();
    const ids = Array.from({ length: 7 }, (_, i) => ledger.recordObligation(reply(100 + i)).row.id);
    const [pending, attempting, retried, permanent, abandoned, discarded, delivered] = ids as [string, string, string, string, string, string, string];
    void pending;
    ledger.markAttempting(attempting);
    ledger.markAttempting(retried);
    ledger.markFailed(retried, { error: 'timeout', retryable: true, permanent: false });
    ledger.markAttempting(permanent);
    ledger.markFailed(permanent, { error: 'bot was blocked by the user', retryable: false, permanent: true });
    for (let attempt = 0; attempt < 5; attempt++) {
      ledger.markAttempting(abandoned);
      ledger.markFailed(abandoned, { error: 'down', retryable: true, permanent: false });
      clock.advance(3_600_000);
    }
    ledger.discardDelivery(discarded);
    ledger.markAttempting(delivered);
    ledger.markDelivered(delivered);
    const counts = ledger.stateCounts(clock.now());
    expect(counts).toEqual({
      pending: 1,
      attempting: 1,
      failed: 1,
      failedPermanently: 1,
      abandoned: 1,
      discarded: 1,
      deliveredLastDay: 1,
    });
    expect(ledger.stateCounts(clock.now() + 2 * 86_400_000).deliveredLastDay).toBe(0);
  });

  it('counts a reply as delivered in the last day by when it arrived, not when it was recorded', () => {
    const { ledger, clock } = setup();
    const late = ledger.recordObligation(reply(200)).row.id;
    clock.advance(2 * 86_400_000); // owed for two days (the platform was down)
    ledger.markAttempting(late);
    ledger.markDelivered(late);
    expect(ledger.stateCounts(clock.now()).deliveredLastDay).toBe(1);
  });
});
