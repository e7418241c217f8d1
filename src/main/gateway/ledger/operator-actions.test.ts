import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, openTestDb, removeTempDirs, reply, testLedger } from './fixtures/test-ledger';
import { PREVIEW_CHARS } from './rows';

afterEach(removeTempDirs);

function setup() {
  const db = openTestDb();
  const clock = new ManualClock();
  const ledger = testLedger(db, clock);
  return { db, clock, ledger };
}

describe("the window's delivery queries", () => {
  it('lists by tab (owed counts failed rows, permanent ones too) and by platform, with the total', () => {
    const { ledger, clock } = setup();
    const ids = ['irc', 'irc', 'irc', 'local', 'local'].map((platform, n) => {
      clock.advance(1);
      return ledger.recordObligation(reply(200 + n, platform)).row.id;
    });
    const [pending, permanent, abandoned, delivered] = ids as [string, string, string, string, string];
    void pending;
    ledger.markAttempting(permanent);
    ledger.markFailed(permanent, { error: 'no such nick', retryable: false, permanent: true });
    ledger.discardDelivery(abandoned);
    ledger.markAttempting(delivered);
    ledger.markDelivered(delivered);

    const owed = ledger.listDeliveries({ filter: 'owed' });
    expect(owed.total).toBe(3);
    expect(owed.deliveries.map((row) => row.id)).toEqual([ids[4], permanent, pending]);
    expect(ledger.listDeliveries({ filter: 'owed', platform: 'irc' })).toMatchObject({ total: 2, hasMore: false });
    expect(ledger.listDeliveries({ filter: 'abandoned' }).deliveries.map((row) => row.id)).toEqual([abandoned]);
    expect(ledger.listDeliveries({ filter: 'delivered' }).total).toBe(1);
    expect(ledger.listDeliveries().total).toBe(5);
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
    ledger.markAttempting(failed);
    ledger.markFailed(failed, { error: 'no such nick', retryable: false, permanent: true });
    for (let attempt = 0; attempt < ledger.policy.maxAttempts; attempt++) {
      ledger.markAttempting(capped);
      ledger.markFailed(capped, { error: 'connection reset', retryable: true, permanent: false });
      clock.advance(3_600_000);
    }
    expect(ledger.getDelivery(capped)?.state).toBe('abandoned');
    ledger.discardDelivery(discarded);
    ledger.markAttempting(other);
    ledger.markFailed(other, { error: 'x', retryable: false, permanent: true });

    expect(ledger.retryPlatform('irc')).toBe(2);
    expect(ledger.getDelivery(failed)).toMatchObject({ state: 'pending', attempts: 0, nextAttemptAt: null });
    expect(ledger.getDelivery(capped)).toMatchObject({ state: 'pending', attempts: 0, abandonReason: null });
    expect(ledger.getDelivery(discarded)?.state).toBe('abandoned');
    expect(ledger.getDelivery(pending)?.state).toBe('pending');
    expect(ledger.getDelivery(other)?.state).toBe('failed');
    expect(ledger.retryPlatform('irc')).toBe(0);
  });
});
