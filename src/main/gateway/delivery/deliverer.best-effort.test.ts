import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LedgerHealth } from '../../../shared/api';
import { EventBus } from '../events';
import { ManualClock, openTestDb, removeTempDirs, tempDir } from '../ledger/fixtures/test-ledger';
import { createLineLogger, type Logger } from '../logger';
import type { Db } from '../db/database';
import { DeliveryService } from './delivery-service';
import { FOUR_PART_REPLY, FOUR_PART_REPLY_ID } from './fixtures/replies';
import { wirePlatform } from './fixtures/wire-platform';
import { RESEND_MARKER } from './marker';
import { waitUntil } from '../../../../test/support/wait';

afterEach(removeTempDirs);

function harness(db: Db, clock: ManualClock) {
  const logged: string[] = [];
  const healthEvents: LedgerHealth[] = [];
  const logger: Logger = createLineLogger({ write: (line) => logged.push(line) });
  const bus = new EventBus(logger);
  bus.on((event) => {
    if (event.type === 'ledger.health') healthEvents.push(event.health);
  });
  const service = DeliveryService.start({ db, clock, logger, bus });
  return { service, logged, healthEvents };
}

/** A real homing.db with a 50 ms busy timeout (so a held lock fails writes quickly) and a service on it. */
function onLockableDb() {
  const dir = tempDir();
  const file = join(dir, 'homing.db');
  const db = openTestDb(file, 50);
  const clock = new ManualClock();
  return { dir, file, db, clock, ...harness(db, clock) };
}

describe('best effort: the ledger failing never stops a reply', () => {
  it('with the database locked by another connection, the reply is still sent and the failure is reported', async () => {
    const { dir, file, db, service, logged, healthEvents } = onLockableDb();
    const platform = wirePlatform(join(dir, 'wire.jsonl'));
    service.registerPlatform(platform);

    const locker = new Database(file);
    locker.exec('BEGIN EXCLUSIVE');
    try {
      const outcome = await service.deliverReply('irc', FOUR_PART_REPLY);
      expect(outcome).toMatchObject({ status: 'delivered', chunksSent: 4, recorded: false });
      expect(platform.requests().map((request) => request.text)).toEqual(FOUR_PART_REPLY.chunks);
      const health = service.ledgerHealth();
      expect(health).toMatchObject({ ok: false });
      expect(health.failures).toBeGreaterThanOrEqual(1);
      expect(healthEvents.length).toBe(health.failures);
      expect(logged.join('\n')).toMatch(/ERROR the delivery ledger failed.*recordObligation/);
    } finally {
      locker.exec('ROLLBACK');
      locker.close();
    }
    // The lock is gone: the next reply is recorded again and health recovers.
    const next = await service.deliverReply('irc', { ...FOUR_PART_REPLY, messageRef: 'msg-43' });
    expect(next).toMatchObject({ status: 'delivered', recorded: true });
    expect(service.ledgerHealth()).toMatchObject({ ok: true });
    await service.stop();
    db.close();
  });

  it('with the database locked mid-reply, the part it cannot mark waits: once the ledger recovers the reply goes on, nothing sent twice', async () => {
    const { dir, file, db, service } = onLockableDb();
    const locker = new Database(file);
    let locked = false;
    const platform = wirePlatform(join(dir, 'wire.jsonl'), {
      async beforeSend(index) {
        if (index === 1) {
          locker.exec('BEGIN EXCLUSIVE'); // the disk "fills up" mid-reply
          locked = true;
        }
        return 'send';
      },
    });
    service.registerPlatform(platform);
    try {
      // Chunk 2 was on its way (marked) as the lock came; chunk 3 cannot be marked, so it is not sent.
      const outcome = await service.deliverReply('irc', FOUR_PART_REPLY);
      expect(outcome).toMatchObject({ status: 'waiting', id: FOUR_PART_REPLY_ID });
      await service.group.flushed();
      expect(platform.requests().map((request) => request.text)).toEqual(FOUR_PART_REPLY.chunks.slice(0, 2));
      expect(service.ledgerHealth().failures).toBeGreaterThan(0);
      // What was sent is remembered, not lost: the row stays held here until it is written.
      expect(service.deliverer.unwrittenFacts).toBeGreaterThan(0);
      expect(service.sweepNow()).toBeUndefined();
    } finally {
      if (locked) locker.exec('ROLLBACK');
      locker.close();
    }
    // The ledger is back: the facts are written first, then the conversation's drain (its retry timer) sends the rest.
    await waitUntil('the reply delivered once the ledger is back', () => service.ledger.getDelivery(FOUR_PART_REPLY_ID)?.state === 'delivered');
    expect(service.deliverer.unwrittenFacts).toBe(0);
    expect(platform.requests().map((request) => request.text)).toEqual(FOUR_PART_REPLY.chunks);
    expect(service.sweepNow()).toMatchObject({ claimed: 0, owed: 0 });
    await service.stop();
    db.close();
  });

  it('a chunk sent while the ledger failed and not confirmed is resent with the marker once the ledger recovers', async () => {
    const { dir, file, db, service } = onLockableDb();
    const locker = new Database(file);
    let calls = 0;
    const irc = wirePlatform(join(dir, 'wire.jsonl'));
    // Chunk 1 goes out plainly; the ledger then fails while chunk 2 is sent, and the connection drops with it.
    service.registerPlatform({
      name: 'irc',
      serverIdempotency: false,
      async send(text, target) {
        calls++;
        if (calls === 2) {
          locker.exec('BEGIN EXCLUSIVE');
          await irc.send(text, target);
          return { ok: false, retryable: true, permanent: false, error: 'connection lost after 3 of 4 lines' };
        }
        return irc.send(text, target);
      },
    });
    try {
      await service.deliverReply('irc', FOUR_PART_REPLY);
    } finally {
      locker.exec('ROLLBACK');
      locker.close();
    }
    expect(service.sweepNow()).toBeDefined();
    // Each resent part waits for its "on its way" mark to reach the disk: on a busy machine that takes a while.
    await waitUntil('the reply delivered after the resend', () => service.ledger.getDelivery(FOUR_PART_REPLY_ID)?.state === 'delivered');
    const texts = irc.requests().map((request) => request.text);
    expect(texts[0]).toBe(FOUR_PART_REPLY.chunks[0]);
    expect(texts[1]).toBe(FOUR_PART_REPLY.chunks[1]);
    // The resend of chunk 2 says it may be a repeat; nothing else repeats.
    expect(texts.slice(2)).toEqual([`${RESEND_MARKER}\n${FOUR_PART_REPLY.chunks[1]}`, FOUR_PART_REPLY.chunks[2], FOUR_PART_REPLY.chunks[3]]);
    expect(service.ledger.getDelivery(FOUR_PART_REPLY_ID)).toMatchObject({ state: 'delivered' });
    await service.stop();
    db.close();
  });

  it('with a read-only database, the reply is still sent and the failure is reported', async () => {
    const dir = tempDir();
    const file = join(dir, 'homing.db');
    openTestDb(file).close();
    const readonly = new Database(file, { readonly: true });
    const clock = new ManualClock();
    const { service } = harness(readonly, clock);
    const platform = wirePlatform(join(dir, 'wire.jsonl'));
    service.registerPlatform(platform);

    const outcome = await service.deliverReply('irc', FOUR_PART_REPLY);
    expect(outcome).toMatchObject({ status: 'delivered', chunksSent: 4, recorded: false });
    expect(platform.requests()).toHaveLength(4);
    expect(service.ledgerHealth()).toMatchObject({ ok: false, lastError: expect.stringMatching(/readonly database/) });
    await service.stop();
    readonly.close();
  });
});
