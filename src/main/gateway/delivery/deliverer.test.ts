import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, openTestDb, removeTempDirs, tempDir, testLedger } from '../ledger/fixtures/test-ledger';
import { silentLogger } from '../logger';
import { Deliverer } from './deliverer';
import { FOUR_PART_REPLY, FOUR_PART_REPLY_ID } from './fixtures/replies';
import { wirePlatform } from './fixtures/wire-platform';
import type { PlatformSender, SendResult } from './sender';

afterEach(removeTempDirs);

function setup() {
  const dir = tempDir();
  const db = openTestDb(join(dir, 'homing.db'));
  const clock = new ManualClock();
  const ledger = testLedger(db, clock);
  const deliverer = new Deliverer({ ledger, clock, logger: silentLogger });
  return { dir, db, clock, ledger, deliverer };
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
    expect(await deliverer.deliverReply(FOUR_PART_REPLY, platform)).toEqual({
      status: 'delivered',
      id: FOUR_PART_REPLY_ID,
      chunksSent: 4,
      recorded: true,
    });
    const keys = ledger.chunks(FOUR_PART_REPLY_ID).map((chunk) => chunk.idempotencyKey);
    expect(platform.requests().map((request) => request.idempotencyKey)).toEqual(keys);
    expect(ledger.getDelivery(FOUR_PART_REPLY_ID)).toMatchObject({ state: 'delivered', chunksDelivered: 4, attempts: 1 });
  });

  it('never sends a delivered reply again when the same turn is handed over twice', async () => {
    const { dir, deliverer } = setup();
    const platform = wirePlatform(join(dir, 'wire.jsonl'));
    await deliverer.deliverReply(FOUR_PART_REPLY, platform);
    expect(await deliverer.deliverReply(FOUR_PART_REPLY, platform)).toEqual({
      status: 'skipped',
      id: FOUR_PART_REPLY_ID,
      reason: 'already-delivered',
    });
    expect(platform.requests()).toHaveLength(4);
  });

  it('a retryable failure leaves the row failed with its progress; the retry resumes after the delivered chunks', async () => {
    const { clock, ledger, deliverer } = setup();
    const platform = scripted([
      { ok: true, platformMessageId: 'a' },
      { ok: false, retryable: true, retryAfterMs: 30_000, permanent: false, error: '429 Too Many Requests', notDelivered: true },
    ]);
    expect(await deliverer.deliverReply(FOUR_PART_REPLY, platform)).toMatchObject({ status: 'failed', chunksSent: 1, retryable: true });
    expect(ledger.getDelivery(FOUR_PART_REPLY_ID)).toMatchObject({ state: 'failed', chunksDelivered: 1, nextAttemptAt: clock.now() + 30_000 });
    // Refused outright (429), so the retry needs no marker.
    expect(ledger.chunks(FOUR_PART_REPLY_ID)[1]!.state).toBe('owed');

    clock.advance(30_000);
    const [claim] = ledger.sweepRecoverable({ now: clock.now(), deliverablePlatforms: [{ name: 'irc', serverIdempotency: false }] }).claimed;
    expect(claim).toMatchObject({ needsMarker: false, firstChunk: { index: 1 } });
    expect(await deliverer.deliverClaimed(claim!, platform)).toMatchObject({ status: 'delivered', chunksSent: 3 });
    expect(platform.texts).toEqual(['part 1 of 4', 'part 2 of 4', 'part 2 of 4', 'part 3 of 4', 'part 4 of 4']);
  });

  it('a send that times out may have arrived: its retry carries the marker', async () => {
    const { clock, ledger, deliverer } = setup();
    const platform = scripted([new Error('socket hang up')]);
    expect(await deliverer.deliverReply(FOUR_PART_REPLY, platform)).toMatchObject({ status: 'failed', error: 'socket hang up' });
    clock.advance(ledger.policy.backoffBaseMs);
    const [claim] = ledger.sweepRecoverable({ now: clock.now(), deliverablePlatforms: [{ name: 'irc', serverIdempotency: false }] }).claimed;
    expect(claim).toMatchObject({ needsMarker: true, firstChunk: { index: 0 } });
    await deliverer.deliverClaimed(claim!, platform);
    expect(platform.texts[1]).toMatch(/^↻ resent after an interruption — this part may be a repeat\npart 1 of 4$/);
    expect(platform.texts.slice(2)).toEqual(['part 2 of 4', 'part 3 of 4', 'part 4 of 4']);
  });

  it('a permanent failure fails the row for good', async () => {
    const { clock, ledger, deliverer } = setup();
    const platform = scripted([{ ok: false, retryable: false, permanent: true, error: 'Forbidden: bot was blocked by the user' }]);
    expect(await deliverer.deliverReply(FOUR_PART_REPLY, platform)).toMatchObject({ status: 'failed', permanent: true, retryable: false });
    clock.advance(24 * 3_600_000);
    expect(ledger.sweepRecoverable({ now: clock.now(), deliverablePlatforms: [{ name: 'irc', serverIdempotency: false }] }).claimed).toEqual([]);
    expect(ledger.getDelivery(FOUR_PART_REPLY_ID)).toMatchObject({ state: 'failed', nextAttemptAt: null });
  });
});
