import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { Db } from '../db/database';
import type { Ledger } from './ledger';
import { EVERY_ROW, claim, FakeMachine, IRC, ManualClock, openTestDb, removeTempDirs, reply, replyIn, sendAll, tempDir, testLedger } from './fixtures/test-ledger';

/**
 * The numbered holes of issue 10, at the ledger's level: each test states what
 * now holds, and each broke on the first version of the core.
 */
afterEach(removeTempDirs);

const RESET = { error: 'connection reset', retryable: true, permanent: false } as const;
const REFUSED = { error: 'not connected', retryable: true, permanent: false } as const;

function setup() {
  const file = join(tempDir(), 'homing.db');
  const db = openTestDb(file);
  const clock = new ManualClock();
  return { file, db, clock };
}

function sweep(ledger: Ledger, clock: ManualClock) {
  return ledger.sweepRecoverable({ now: clock.now(), deliverablePlatforms: [IRC] });
}

function state(db: Db, id: string): { state: string; owner: string | null; fence: number; attempts: number } {
  return db.prepare(`SELECT state, owner_instance AS owner, fence, attempts FROM ${EVERY_ROW} WHERE id = ?`).get(id) as never;
}

describe('the delivery promise (issue 10)', () => {
  it('a refused resend keeps the marker: a chunk that may have arrived is marked on every later resend', () => {
    const { db, clock } = setup();
    const crashed = testLedger(db, clock);
    const id = crashed.recordObligation(reply(1, 'irc', 2)).row.id;
    expect(crashed.markChunkSending(claim(crashed, id).receipt, 0)).toEqual({ ok: true, marker: false });
    crashed.stop(); // killed while chunk 0 was on its way

    const ledger = testLedger(db, clock);
    const [first] = sweep(ledger, clock).claimed;
    expect(first).toMatchObject({ id, needsMarker: true, firstChunk: { index: 0 } });
    expect(ledger.markChunkSending(first!.receipt, 0)).toEqual({ ok: true, marker: true });
    // The resend is refused outright ("not connected"): it did not arrive, but the first send still may have.
    expect(ledger.markChunkUnsent(first!.receipt, 0)).toEqual({ ok: true });
    ledger.markFailed(first!.receipt, REFUSED);
    ledger.letGo(id);
    expect(ledger.chunks(id)[0]).toMatchObject({ state: 'owed', mayHaveArrived: true });

    clock.advance(ledger.policy.backoffBaseMs);
    const [second] = sweep(ledger, clock).claimed;
    expect(second).toMatchObject({ id, needsMarker: true, mayHaveArrived: true });
    expect(ledger.markChunkSending(second!.receipt, 0)).toEqual({ ok: true, marker: true });
    ledger.markChunkDelivered(second!.receipt, 0, 'pm-0');
    // The next chunk was never on its way before: no marker.
    expect(ledger.markChunkSending(second!.receipt, 1)).toEqual({ ok: true, marker: false });
  });

  it('discard, then retry, never gives two senders: retry is refused while the sender holds the row; after it stops, retry works and the old receipt is stale', () => {
    const { db, clock } = setup();
    const sender = testLedger(db, clock);
    const operator = testLedger(db, clock); // the CLI or the window, through another instance
    const id = sender.recordObligation(reply(1, 'irc', 3)).row.id;
    const first = claim(sender, id);
    sender.markChunkSending(first.receipt, 0);

    expect(operator.discardDelivery(id)).toMatchObject({ ok: true, row: { state: 'abandoned', abandonReason: 'discarded by the user' } });
    expect(state(db, id).owner).toBe(sender.instanceId);
    for (const who of [operator, sender]) {
      expect(who.retryDelivery(id)).toMatchObject({ ok: false, reason: 'conflict', message: expect.stringMatching(/still being sent/) });
    }
    expect(sweep(operator, clock).claimed).toEqual([]);

    // The chunk on its way arrives and is recorded; the next one is refused: the sender stops.
    expect(sender.markChunkDelivered(first.receipt, 0, 'pm-0')).toEqual({ ok: true });
    expect(sender.markChunkSending(first.receipt, 1)).toEqual({ ok: false, reason: 'stale' });
    expect(sender.release(first.receipt)).toEqual({ ok: true });
    sender.letGo(id);
    expect(state(db, id)).toMatchObject({ state: 'abandoned', owner: null });

    expect(operator.retryDelivery(id)).toMatchObject({ ok: true, row: { state: 'pending', attempts: 0, chunksDelivered: 1 } });
    for (const write of [
      () => sender.markChunkSending(first.receipt, 1),
      () => sender.markChunkDelivered(first.receipt, 1, 'x'),
      () => sender.markDelivered(first.receipt),
      () => sender.markFailed(first.receipt, RESET),
      () => sender.release(first.receipt),
    ]) {
      expect(write()).toEqual({ ok: false, reason: 'stale' });
    }
    const [second] = sweep(operator, clock).claimed;
    expect(second).toMatchObject({ id, firstChunk: { index: 1 } });
    expect(sweep(sender, clock).claimed).toEqual([]);
    expect(sender.markAttempting(id)).toMatchObject({ ok: false, reason: 'owned-elsewhere' });
  });

  it('order holds across a failed send: a later reply waits while the earlier one waits for its retry, and the sweep takes the earlier first', () => {
    const { db, clock } = setup();
    const ledger = testLedger(db, clock);
    const [first, second] = [replyIn('alice', 1), replyIn('alice', 2)].map((input) => ledger.recordObligation(input).row.id) as [string, string];
    ledger.markFailed(claim(ledger, first).receipt, RESET);
    ledger.letGo(first);

    expect(ledger.markAttempting(second)).toMatchObject({ ok: false, reason: 'behind-earlier-reply' });
    expect(sweep(ledger, clock).claimed).toEqual([]);
    expect(ledger.claimNext(replyIn('alice', 1).sessionKey, [IRC])).toEqual({
      kind: 'wait',
      reason: 'retry-later',
      retryAt: clock.now() + ledger.policy.backoffBaseMs,
    });

    clock.advance(ledger.policy.backoffBaseMs);
    const due = sweep(ledger, clock).claimed;
    expect(due.map((held) => held.id)).toEqual([first]);
    sendAll(ledger, due[0]!);
    expect(sweep(ledger, clock).claimed.map((held) => held.id)).toEqual([second]);
  });

  it('order holds across a restart: a new ledger on the same file sends the earlier reply first', () => {
    const { file, db, clock } = setup();
    const before = testLedger(db, clock);
    const [first, second] = [replyIn('alice', 1), replyIn('alice', 2)].map((input) => before.recordObligation(input).row.id) as [string, string];
    before.markFailed(claim(before, first).receipt, RESET);
    db.close(); // killed: no stop()

    const reopened = openTestDb(file);
    const after = testLedger(reopened, clock, {}, { exclusive: true });
    expect(sweep(after, clock).claimed).toEqual([]);
    expect(after.markAttempting(second)).toMatchObject({ ok: false, reason: 'behind-earlier-reply' });
    clock.advance(after.policy.backoffBaseMs);
    const due = sweep(after, clock).claimed;
    expect(due.map((held) => held.id)).toEqual([first]);
    sendAll(after, due[0]!);
    expect(after.claimNext(replyIn('alice', 2).sessionKey, [IRC])).toMatchObject({ kind: 'claimed', claim: { id: second, seq: 2 } });
    reopened.close();
  });

  it('5 crashes before anything was sent do not abandon a reply that was never tried', () => {
    const { db, clock } = setup();
    const recorder = testLedger(db, clock);
    const id = recorder.recordObligation(reply(1)).row.id;
    recorder.stop();
    for (let crash = 1; crash <= 5; crash++) {
      const doomed = testLedger(db, clock);
      expect(sweep(doomed, clock).claimed.map((held) => [held.id, held.attempts])).toEqual([[id, 0]]);
      doomed.stop(); // dies before handing anything to the platform
      clock.advance(1_000);
    }
    const survivor = testLedger(db, clock);
    const outcome = sweep(survivor, clock);
    expect(outcome.report.abandoned).toBe(0);
    expect(outcome.claimed).toMatchObject([{ id, attempts: 0 }]);
    sendAll(survivor, outcome.claimed[0]!);
    expect(survivor.getDelivery(id)).toMatchObject({ state: 'delivered', attempts: 0, abandonReason: null });
  });

  it('register({ exclusive: true }) makes a dead predecessor’s rows claimable at once, without waiting out its lease', () => {
    const { db, clock } = setup();
    // The predecessor never stopped and its heartbeat is fresh; with the
    // system probe it even shares our pid and start time, so nothing but the
    // data directory's lock can tell it is gone.
    const predecessor = testLedger(db, clock);
    const id = predecessor.recordObligation(reply(1)).row.id;
    const bystander = testLedger(db, clock);
    expect(bystander.markAttempting(id)).toMatchObject({ ok: false, reason: 'owned-elsewhere' });

    const successor = testLedger(db, clock, {}, { exclusive: true });
    expect(sweep(successor, clock).claimed.map((held) => held.id)).toEqual([id]);
  });

  it('an owner whose pid is gone in our pid namespace is dead at once, however fresh its heartbeat; one whose pid lives is alive however old its heartbeat', () => {
    const { db, clock } = setup();
    const machine = new FakeMachine();
    const killed = machine.spawn();
    const asleep = machine.spawn();
    const a = testLedger(db, clock, { probe: killed.probe });
    const b = testLedger(db, clock, { probe: asleep.probe });
    const gone = a.recordObligation(reply(1)).row.id;
    const sleeping = b.recordObligation(reply(2)).row.id;
    machine.kill(killed.pid);

    const sweeper = testLedger(db, clock, { probe: machine.spawn().probe });
    // a's heartbeat is 0 ms old: the lease would hold its row for 30 s more. The pid decides.
    expect(sweep(sweeper, clock).claimed.map((held) => held.id)).toEqual([gone]);
    clock.advance(10 * 3_600_000); // b's heartbeat is ten hours old (the laptop slept)
    expect(sweep(sweeper, clock).claimed).toEqual([]);
    expect(sweeper.markAttempting(sleeping)).toMatchObject({ ok: false, reason: 'owned-elsewhere' });
  });
});
