import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, openTestDb, removeTempDirs, tempDir, testLedger } from '../ledger/fixtures/test-ledger';
import { silentLogger } from '../logger';
import { Deliverer } from './deliverer';
import { FOUR_PART_REPLY } from './fixtures/replies';
import { RESEND_MARKER } from './marker';
import { tracksArrival, type PlatformSender, type SendResult } from './sender';

afterEach(removeTempDirs);

/**
 * A platform whose server deduplicates a resend by its key only for a while
 * (Discord's nonce with enforce_nonce): a chunk whose send went unanswered is
 * resent without the marker inside that window, and with it after.
 */
const WINDOW_MS = 120_000;

function setup() {
  const db = openTestDb(join(tempDir(), 'homing.db'));
  const clock = new ManualClock();
  const ledger = testLedger(db, clock);
  const deliverer = new Deliverer({ ledger, clock, logger: silentLogger });
  const texts: string[] = [];
  const keys: string[] = [];
  const results: SendResult[] = [];
  const sender: PlatformSender = {
    name: 'discord',
    serverIdempotency: true,
    dedupWindowMs: WINDOW_MS,
    async send(text, target) {
      texts.push(text);
      keys.push(target.idempotencyKey);
      return results.shift() ?? { ok: true, platformMessageId: `m${texts.length}` };
    },
  };
  // What the delivery service tells the ledger of such a sender (deliverableOf).
  const platforms = [{ name: 'discord', serverIdempotency: !tracksArrival(sender) }];
  return { clock, ledger, deliverer, sender, texts, keys, results, platforms };
}

/** Sends the 4-part reply with its third chunk unanswered (a timeout: it may have arrived), then retries after `laterMs`. */
async function unansweredThenRetried(laterMs: number) {
  const s = setup();
  s.results.push({ ok: true, platformMessageId: 'a' }, { ok: true, platformMessageId: 'b' }, { ok: false, retryable: true, permanent: false, error: 'timed out' });
  const recorded = s.deliverer.recordReply('discord', FOUR_PART_REPLY);
  const first = s.ledger.markAttempting(recorded.id, s.platforms);
  if (!first.ok) throw new Error(first.reason);
  expect(await s.deliverer.deliverClaimed(first.claim, s.sender)).toMatchObject({ status: 'failed', chunksSent: 2 });
  s.clock.advance(laterMs);
  const again = s.ledger.markAttempting(recorded.id, s.platforms);
  if (!again.ok) throw new Error(again.reason);
  expect(await s.deliverer.deliverClaimed(again.claim, s.sender)).toMatchObject({ status: 'delivered' });
  return s;
}

describe('a platform that deduplicates resends for a while (a nonce window)', () => {
  it('resends a chunk that may have arrived without the marker inside the window, with its key', async () => {
    const { texts, keys } = await unansweredThenRetried(WINDOW_MS / 2);
    expect(texts.slice(3)).toEqual([FOUR_PART_REPLY.chunks[2], FOUR_PART_REPLY.chunks[3]]);
    expect(keys[3]).toBe(keys[2]);
  });

  it('marks the resend once the window has passed: the server may no longer know the key', async () => {
    const { texts, keys } = await unansweredThenRetried(WINDOW_MS + 1);
    expect(texts[3]!.startsWith(RESEND_MARKER)).toBe(true);
    expect(texts[4]).toBe(FOUR_PART_REPLY.chunks[3]);
    expect(keys[3]).toBe(keys[2]);
  });

  it('marks nothing that never went out, however late', async () => {
    const s = setup();
    s.results.push({ ok: true, platformMessageId: 'a' }, { ok: false, retryable: true, permanent: false, notDelivered: true, error: 'refused' });
    const recorded = s.deliverer.recordReply('discord', FOUR_PART_REPLY);
    const first = s.ledger.markAttempting(recorded.id, s.platforms);
    if (!first.ok) throw new Error(first.reason);
    await s.deliverer.deliverClaimed(first.claim, s.sender);
    s.clock.advance(WINDOW_MS * 10);
    const again = s.ledger.markAttempting(recorded.id, s.platforms);
    if (!again.ok) throw new Error(again.reason);
    await s.deliverer.deliverClaimed(again.claim, s.sender);
    expect(s.texts.slice(2)).toEqual(FOUR_PART_REPLY.chunks.slice(1));
  });
});
