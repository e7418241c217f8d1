import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Ledger } from '../ledger';
import { IRC, ManualClock, openTestDb, removeTempDirs, tempDir, testLedger } from '../ledger/fixtures/test-ledger';
import { silentLogger } from '../logger';
import { Deliverer, type DeliveryOutcome, type SplitReply } from './deliverer';
import { FOUR_PART_REPLY, FOUR_PART_REPLY_ID } from './fixtures/replies';
import { wirePlatform } from './fixtures/wire-platform';
import type { PlatformSender, SendResult } from './sender';

afterEach(removeTempDirs);

function setup(busyTimeoutMs = 2000) {
  const dir = tempDir();
  const file = join(dir, 'homing.db');
  const db = openTestDb(file, busyTimeoutMs);
  const clock = new ManualClock();
  const ledger = testLedger(db, clock);
  const deliverer = new Deliverer({ ledger, clock, logger: silentLogger });
  return { dir, file, db, clock, ledger, deliverer };
}

/** What the gateway does with a fresh reply: records it, claims it (the head of its outbox) and sends it. */
async function deliverReply(ledger: Ledger, deliverer: Deliverer, reply: SplitReply, sender: PlatformSender): Promise<DeliveryOutcome> {
  const recorded = deliverer.recordReply(sender.name, reply);
  const claimed = ledger.markAttempting(recorded.id, [{ name: sender.name, serverIdempotency: sender.serverIdempotency }]);
  if (!claimed.ok) return { status: 'skipped', id: recorded.id, reason: claimed.reason };
  return deliverer.deliverClaimed(claimed.claim, sender);
}

function sweep(ledger: Ledger, clock: ManualClock) {
  return ledger.sweepRecoverable({ now: clock.now(), deliverablePlatforms: [IRC] }).claimed;
}

/** A platform that answers each send with the next scripted result. */
function scripted(results: (SendResult | Error)[]): PlatformSender & { texts: string[] } {
  const texts: string[] = [];
  return {
    name: 'irc',
    serverIdempotency: false,
    texts,
    async send(text) {
      texts.push(text);
      const next = results.shift() ?? { ok: true, platformMessageId: `m${texts.length}` };
      if (next instanceof Error) throw next;
      return next;
    },
  };
}

describe('the delivery loop', () => {
  it('records, sends every chunk with its key, and marks the reply delivered', async () => {
    const { dir, ledger, deliverer } = setup();
    const platform = wirePlatform(join(dir, 'wire.jsonl'));
    expect(await deliverReply(ledger, deliverer, FOUR_PART_REPLY, platform)).toEqual({
      status: 'delivered',
      id: FOUR_PART_REPLY_ID,
      chunksSent: 4,
      recorded: true,
    });
    const keys = ledger.chunks(FOUR_PART_REPLY_ID).map((chunk) => chunk.idempotencyKey);
    expect(platform.requests().map((request) => request.idempotencyKey)).toEqual(keys);
    expect(ledger.getDelivery(FOUR_PART_REPLY_ID)).toMatchObject({ state: 'delivered', chunksDelivered: 4, attempts: 0 });
    expect(ledger.isHeld(FOUR_PART_REPLY_ID)).toBe(false);
  });

  it('never sends a delivered reply again when the same turn is handed over twice', async () => {
    const { dir, ledger, deliverer } = setup();
    const platform = wirePlatform(join(dir, 'wire.jsonl'));
    await deliverReply(ledger, deliverer, FOUR_PART_REPLY, platform);
    expect(await deliverReply(ledger, deliverer, FOUR_PART_REPLY, platform)).toEqual({
      status: 'skipped',
      id: FOUR_PART_REPLY_ID,
      reason: 'not-owed',
    });
    expect(platform.requests()).toHaveLength(4);
  });

  it('a retryable failure leaves the row failed with its progress; the retry resumes after the delivered chunks', async () => {
    const { clock, ledger, deliverer } = setup();
    const platform = scripted([
      { ok: true, platformMessageId: 'a' },
      { ok: false, retryable: true, retryAfterMs: 30_000, permanent: false, error: '429 Too Many Requests', notDelivered: true },
    ]);
    expect(await deliverReply(ledger, deliverer, FOUR_PART_REPLY, platform)).toMatchObject({ status: 'failed', chunksSent: 1, retryable: true });
    expect(ledger.getDelivery(FOUR_PART_REPLY_ID)).toMatchObject({ state: 'failed', chunksDelivered: 1, attempts: 1, nextAttemptAt: clock.now() + 30_000 });
    // Refused outright (429), so the retry needs no marker.
    expect(ledger.chunks(FOUR_PART_REPLY_ID)[1]!.state).toBe('owed');

    clock.advance(30_000);
    const [claim] = sweep(ledger, clock);
    expect(claim).toMatchObject({ needsMarker: false, firstChunk: { index: 1 } });
    expect(await deliverer.deliverClaimed(claim!, platform)).toMatchObject({ status: 'delivered', chunksSent: 3 });
    expect(platform.texts).toEqual(['part 1 of 4', 'part 2 of 4', 'part 2 of 4', 'part 3 of 4', 'part 4 of 4']);
  });

  it('a send that times out may have arrived: its retry carries the marker', async () => {
    const { clock, ledger, deliverer } = setup();
    const platform = scripted([new Error('socket hang up')]);
    expect(await deliverReply(ledger, deliverer, FOUR_PART_REPLY, platform)).toMatchObject({ status: 'failed', error: 'socket hang up' });
    clock.advance(ledger.policy.backoffBaseMs);
    const [claim] = sweep(ledger, clock);
    expect(claim).toMatchObject({ needsMarker: true, firstChunk: { index: 0 } });
    await deliverer.deliverClaimed(claim!, platform);
    expect(platform.texts[1]).toMatch(/^↻ resent after an interruption — this part may be a repeat\npart 1 of 4$/);
    expect(platform.texts.slice(2)).toEqual(['part 2 of 4', 'part 3 of 4', 'part 4 of 4']);
  });

  it('a permanent failure fails the row for good', async () => {
    const { clock, ledger, deliverer } = setup();
    const platform = scripted([{ ok: false, retryable: false, permanent: true, error: 'Forbidden: bot was blocked by the user' }]);
    expect(await deliverReply(ledger, deliverer, FOUR_PART_REPLY, platform)).toMatchObject({ status: 'failed', permanent: true, retryable: false });
    clock.advance(24 * 3_600_000);
    expect(sweep(ledger, clock)).toEqual([]);
    expect(ledger.getDelivery(FOUR_PART_REPLY_ID)).toMatchObject({ state: 'failed', nextAttemptAt: null });
  });

  it('a row discarded mid-send: the chunk on its way is recorded as delivered, and the sender stops before the next', async () => {
    const { ledger, deliverer } = setup();
    const platform = scripted([]);
    const send = platform.send.bind(platform);
    platform.send = async (text, target) => {
      if (platform.texts.length === 1) ledger.discardDelivery(FOUR_PART_REPLY_ID); // the user clicks Discard during chunk 2
      return send(text, target);
    };
    expect(await deliverReply(ledger, deliverer, FOUR_PART_REPLY, platform)).toMatchObject({ status: 'stopped', chunksSent: 2 });
    expect(platform.texts).toEqual(['part 1 of 4', 'part 2 of 4']);
    expect(ledger.getDelivery(FOUR_PART_REPLY_ID)).toMatchObject({ state: 'abandoned', chunksDelivered: 2, abandonReason: 'discarded by the user' });
    // Stopped and released: the user may retry it now.
    expect(ledger.isHeld(FOUR_PART_REPLY_ID)).toBe(false);
    expect(ledger.retryDelivery(FOUR_PART_REPLY_ID)).toMatchObject({ ok: true });
  });
});

describe('a ledger that fails and recovers', () => {
  /** Takes the write lock from another connection: every write of ours fails with SQLITE_BUSY after its short busy timeout. */
  function lock(file: string): () => void {
    const locker = new Database(file);
    locker.exec('BEGIN EXCLUSIVE');
    return () => {
      locker.exec('ROLLBACK');
      locker.close();
    };
  }

  it('never sends a part it could not mark: the reply waits for the ledger, facts of the sends made are written back, and nothing repeats', async () => {
    const { file, clock, ledger, deliverer } = setup(20);
    let unlock = (): void => {};
    const platform = scripted([]);
    const send = platform.send.bind(platform);
    platform.send = async (text, target) => {
      if (platform.texts.length === 1) unlock = lock(file); // the ledger fails during chunk 2's send
      return send(text, target);
    };
    // Chunk 2 went out (its delivered mark is a fact to write back); chunk 3's "on its way" mark fails: it is not sent.
    expect(await deliverReply(ledger, deliverer, FOUR_PART_REPLY, platform)).toMatchObject({ status: 'waiting-for-ledger', chunksSent: 2 });
    expect(platform.texts).toEqual(['part 1 of 4', 'part 2 of 4']);
    expect(deliverer.unwrittenFacts).toBeGreaterThan(0);
    expect(deliverer.flushFacts()).toBe(false); // still locked
    unlock();

    // Facts not written yet: the row is still held, so this process's own sweep leaves it alone.
    expect(ledger.isHeld(FOUR_PART_REPLY_ID)).toBe(true);
    expect(sweep(ledger, clock)).toEqual([]);
    expect(deliverer.flushFacts()).toBe(true);
    expect(deliverer.unwrittenFacts).toBe(0);
    expect(ledger.chunks(FOUR_PART_REPLY_ID).map((chunk) => [chunk.state, chunk.mayHaveArrived])).toEqual([
      ['delivered', false],
      ['delivered', false],
      ['owed', false],
      ['owed', false],
    ]);

    // The ledger is back: the reply goes on from chunk 3, which never left, so with no marker.
    const [claim] = sweep(ledger, clock);
    expect(claim).toMatchObject({ firstChunk: { index: 2 }, needsMarker: false });
    expect(await deliverer.deliverClaimed(claim!, platform)).toMatchObject({ status: 'delivered', chunksSent: 2 });
    expect(platform.texts).toEqual(FOUR_PART_REPLY.chunks);
    expect(ledger.getDelivery(FOUR_PART_REPLY_ID)).toMatchObject({ state: 'delivered', chunksDelivered: 4 });
  });

  it('a reply sent unrecorded because its claim failed is never sent again by its own sweep once the facts are back', async () => {
    const { file, clock, ledger, deliverer } = setup(20);
    const platform = scripted([]);
    const recorded = deliverer.recordReply('irc', FOUR_PART_REPLY);
    expect(recorded.result).toBeDefined();
    const unlock = lock(file);
    try {
      expect(deliverer.guard('markAttempting', recorded.id, () => ledger.markAttempting(recorded.id, [IRC]))).toBeUndefined();
      expect(await deliverer.sendUnrecorded(recorded, platform)).toMatchObject({ status: 'delivered', chunksSent: 4, recorded: false });
    } finally {
      unlock();
    }
    // Pending with every chunk owed in the ledger, but held here until the facts are written.
    expect(ledger.getDelivery(recorded.id)).toMatchObject({ state: 'pending', chunksDelivered: 0 });
    expect(sweep(ledger, clock)).toEqual([]);
    expect(deliverer.flushFacts()).toBe(true);
    expect(ledger.getDelivery(recorded.id)).toMatchObject({ state: 'delivered', chunksDelivered: 4 });
    clock.advance(3_600_000);
    expect(sweep(ledger, clock)).toEqual([]);
    expect(platform.texts).toEqual(FOUR_PART_REPLY.chunks);
  });
});
