import { afterEach, describe, expect, it } from 'vitest';
import { claim, ManualClock, openTestDb, removeTempDirs, reply, sendAll, testLedger } from './fixtures/test-ledger';
import { PREVIEW_CHARS } from './rows';

afterEach(removeTempDirs);

function setup() {
  const db = openTestDb();
  const clock = new ManualClock();
  const ledger = testLedger(db, clock);
  return { db, clock, ledger };
}

describe("the window's delivery queries", () => {
  it('lists by tab — owed is states.ts OWED (a retry scheduled counts, a permanent failure does not), given up is abandoned or failed for good — and by platform, with the total', () => {
    const { ledger, clock } = setup();
    const ids = ['irc', 'irc', 'irc', 'local', 'local', 'irc'].map((platform, n) => {
      clock.advance(1);
      return ledger.recordObligation(reply(200 + n, platform)).row.id;
    });
    const [pending, permanent, abandoned, delivered, attempting, retrying] = ids as [string, string, string, string, string, string];
    ledger.markFailed(claim(ledger, permanent).receipt, { error: 'no such nick', retryable: false, permanent: true });
    ledger.discardDelivery(abandoned);
    sendAll(ledger, claim(ledger, delivered, [{ name: 'local', serverIdempotency: false }]));
    claim(ledger, attempting, [{ name: 'local', serverIdempotency: false }]);
    ledger.markFailed(claim(ledger, retrying).receipt, { error: 'connection reset', retryable: true, permanent: false });

    const owed = ledger.listDeliveries({ filter: 'owed' });
    expect(owed.deliveries.map((row) => row.id)).toEqual([retrying, attempting, pending]);
    expect(owed.total).toBe(ledger.owedCount());
    expect(ledger.listDeliveries({ filter: 'owed', platform: 'irc' })).toMatchObject({ total: 2, hasMore: false });
    expect(ledger.listDeliveries({ filter: 'abandoned' }).deliveries.map((row) => row.id)).toEqual([abandoned, permanent]);
    expect(ledger.listDeliveries({ filter: 'delivered' }).total).toBe(1);
    expect(ledger.listDeliveries().total).toBe(6);
  });

  it('pages 10 000 owed rows by 50 and says how many there are', () => {
    const { ledger, db } = setup();
    db.transaction(() => {
      for (let n = 0; n < 10_000; n++) ledger.recordObligation(reply(10_000 + n));
    })();
    const last = ledger.listDeliveries({ filter: 'owed', page: 200 });
    expect(last).toMatchObject({ total: 10_000, page: 200, hasMore: false });
    expect(last.deliveries).toHaveLength(50);
  });

  it('carries a one-line preview of at most 120 characters, and the whole text on request', () => {
    const { ledger } = setup();
    const long = { ...reply(300), content: `first line\n\n${'word '.repeat(100)}🙂 end` };
    const row = ledger.recordObligation(long).row;
    expect(row.preview).toMatch(/^first line word word/);
    expect(row.preview).not.toContain('\n');
    expect([...row.preview]).toHaveLength(PREVIEW_CHARS);
    expect(row.preview.endsWith('…')).toBe(true);
    expect(ledger.deliveryText(row.id)).toBe(long.content);
    expect(ledger.deliveryText('0'.repeat(24))).toBeUndefined();
  });

  it('retries every failed or given-up row of one platform, but not what the user discarded', () => {
    const { ledger, clock } = setup();
    const [failed, capped, discarded, pending, other] = [reply(400), reply(401), reply(402), reply(403), reply(404, 'local')].map(
      (input) => ledger.recordObligation(input).row.id,
    ) as [string, string, string, string, string];
    ledger.markFailed(claim(ledger, failed).receipt, { error: 'no such nick', retryable: false, permanent: true });
    ledger.letGo(failed);
    for (let attempt = 0; attempt < ledger.policy.maxAttempts; attempt++) {
      ledger.markFailed(claim(ledger, capped).receipt, { error: 'connection reset', retryable: true, permanent: false });
      ledger.letGo(capped);
      clock.advance(3_600_000);
    }
    expect(ledger.getDelivery(capped)?.state).toBe('abandoned');
    ledger.discardDelivery(discarded);
    ledger.markFailed(claim(ledger, other, [{ name: 'local', serverIdempotency: false }]).receipt, { error: 'x', retryable: false, permanent: true });
    ledger.letGo(other);

    expect(ledger.retryPlatform('irc')).toBe(2);
    expect(ledger.getDelivery(failed)).toMatchObject({ state: 'pending', attempts: 0, nextAttemptAt: null });
    expect(ledger.getDelivery(capped)).toMatchObject({ state: 'pending', attempts: 0, abandonReason: null });
    expect(ledger.getDelivery(discarded)?.state).toBe('abandoned');
    expect(ledger.getDelivery(pending)?.state).toBe('pending');
    expect(ledger.getDelivery(other)?.state).toBe('failed');
    expect(ledger.retryPlatform('irc')).toBe(0);
  });

  it('retry all leaves alone a row this process still holds, and takes it once let go', () => {
    const { ledger } = setup();
    const id = ledger.recordObligation(reply(500)).row.id;
    ledger.markFailed(claim(ledger, id).receipt, { error: 'no such nick', retryable: false, permanent: true });
    // Failed, but its sender has not finished with it yet.
    expect(ledger.retryPlatform('irc')).toBe(0);
    ledger.letGo(id);
    expect(ledger.retryPlatform('irc')).toBe(1);
    expect(ledger.getDelivery(id)).toMatchObject({ state: 'pending', attempts: 0 });
  });
});
