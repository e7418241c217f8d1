import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LedgerHealth } from '../../../shared/api';
import { Ledger } from '../ledger';
import { ManualClock, openTestDb, removeTempDirs, tempDir, testLedger } from '../ledger/fixtures/test-ledger';
import { createLineLogger } from '../logger';
import { Deliverer } from './deliverer';
import { FOUR_PART_REPLY, FOUR_PART_REPLY_ID } from './fixtures/replies';
import { wirePlatform } from './fixtures/wire-platform';

afterEach(removeTempDirs);

function harness(ledger: Ledger, clock: ManualClock) {
  const logged: string[] = [];
  const healthEvents: LedgerHealth[] = [];
  const deliverer = new Deliverer({
    ledger,
    clock,
    logger: createLineLogger({ write: (line) => logged.push(line) }),
    onLedgerFailure: (health) => healthEvents.push(health),
  });
  return { deliverer, logged, healthEvents };
}

describe('best effort: the ledger failing never stops a reply', () => {
  it('with the database locked by another connection, the reply is still sent and the failure is reported', async () => {
    const dir = tempDir();
    const file = join(dir, 'homing.db');
    const db = openTestDb(file, 50);
    const clock = new ManualClock();
    const ledger = testLedger(db, clock);
    const { deliverer, logged, healthEvents } = harness(ledger, clock);
    const platform = wirePlatform(join(dir, 'wire.jsonl'));

    const locker = new Database(file);
    locker.exec('BEGIN EXCLUSIVE');
    try {
      const outcome = await deliverer.deliverReply(FOUR_PART_REPLY, platform);
      expect(outcome).toMatchObject({ status: 'delivered', chunksSent: 4, recorded: false });
      expect(platform.requests().map((request) => request.text)).toEqual(FOUR_PART_REPLY.chunks);
      const health = deliverer.ledgerHealth();
      expect(health).toMatchObject({ ok: false, failures: 1, lastFailureAt: clock.now() });
      expect(health.lastError).toMatch(/recordObligation: database is locked/);
      expect(healthEvents).toHaveLength(1);
      expect(logged.join('\n')).toMatch(/ERROR the delivery ledger failed; sending anyway/);
    } finally {
      locker.exec('ROLLBACK');
      locker.close();
    }
    // The lock is gone: the next reply is recorded again and health recovers.
    const next = await deliverer.deliverReply({ ...FOUR_PART_REPLY, messageRef: 'msg-43' }, platform);
    expect(next).toMatchObject({ status: 'delivered', recorded: true });
    expect(deliverer.ledgerHealth()).toMatchObject({ ok: true, failures: 1 });
    db.close();
  });

  it('with the database lock taken after recording, the rest of the reply is still sent and every failed write counted', async () => {
    const dir = tempDir();
    const file = join(dir, 'homing.db');
    const db = openTestDb(file, 50);
    const clock = new ManualClock();
    const ledger = testLedger(db, clock);
    const { deliverer } = harness(ledger, clock);
    const locker = new Database(file);
    const platform = wirePlatform(join(dir, 'wire.jsonl'), {
      async beforeSend(index) {
        if (index === 1) locker.exec('BEGIN EXCLUSIVE'); // the disk "fills up" mid-reply
        return 'send';
      },
    });
    try {
      const outcome = await deliverer.deliverReply(FOUR_PART_REPLY, platform);
      expect(outcome).toMatchObject({ status: 'delivered', chunksSent: 4, recorded: true });
      expect(platform.requests()).toHaveLength(4);
      // Written: chunk 1 sending + confirmed, chunk 2 sending (the lock comes during
      // its send). Failed: chunk 2 confirmed, chunks 3–4 sending + confirmed, and
      // the final markDelivered — 6 writes.
      expect(deliverer.ledgerHealth()).toMatchObject({ ok: false, failures: 6 });
    } finally {
      locker.exec('ROLLBACK');
      locker.close();
    }
    expect(ledger.getDelivery(FOUR_PART_REPLY_ID)).toMatchObject({ state: 'attempting', chunksDelivered: 1 });
    db.close();
  });

  it('with a read-only database, the reply is still sent and the failure is reported', async () => {
    const dir = tempDir();
    const file = join(dir, 'homing.db');
    openTestDb(file).close();
    const readonly = new Database(file, { readonly: true });
    const clock = new ManualClock();
    const ledger = new Ledger({ db: readonly, clock, newInstanceId: () => 'read-only' });
    const { deliverer } = harness(ledger, clock);
    const platform = wirePlatform(join(dir, 'wire.jsonl'));

    const outcome = await deliverer.deliverReply(FOUR_PART_REPLY, platform);
    expect(outcome).toMatchObject({ status: 'delivered', chunksSent: 4, recorded: false });
    expect(platform.requests()).toHaveLength(4);
    expect(deliverer.ledgerHealth()).toMatchObject({ ok: false, failures: 1, lastError: expect.stringMatching(/readonly database/) });
    readonly.close();
  });
});
