import { afterEach, describe, expect, it } from 'vitest';
import { claim, ManualClock, openTestDb, preparedPlans, removeTempDirs, reply, sendAll, testLedger } from './fixtures/test-ledger';
import { DELIVERY_STATES, type DeliveryFilter, type DeliveryRow } from '../../../shared/api';
import type { Ledger } from './ledger';
import { BadCursorError, FILTER_STATES, MAX_SEEKS, PAGE_SIZE } from './operator-actions';
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
    let page = ledger.listDeliveries({ filter: 'owed' });
    for (let walked = 1; walked < 200; walked++) page = ledger.listDeliveries({ filter: 'owed', cursor: page.nextCursor! });
    expect(page).toMatchObject({ total: 10_000, page: 200, hasMore: false, nextCursor: null });
    expect(page.deliveries).toHaveLength(50);
    // The old way still answers, for old callers.
    expect(ledger.listDeliveries({ filter: 'owed', page: 200 }).deliveries.map((row) => row.id)).toEqual(page.deliveries.map((row) => row.id));
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

/** Row `n` recorded and taken to one of six ends, so every tab and every state has rows. */
function recordInState(ledger: Ledger, n: number, platform: string): string {
  const id = ledger.recordObligation(reply(n, platform)).row.id;
  const on = [{ name: platform, serverIdempotency: false }];
  switch (n % 6) {
    case 0:
      return id; // pending
    case 1:
      sendAll(ledger, claim(ledger, id, on));
      return id;
    case 2:
      ledger.markFailed(claim(ledger, id, on).receipt, { error: 'connection reset', retryable: true, permanent: false });
      ledger.letGo(id);
      return id;
    case 3:
      ledger.markFailed(claim(ledger, id, on).receipt, { error: 'no such nick', retryable: false, permanent: true });
      ledger.letGo(id);
      return id;
    case 4:
      ledger.discardDelivery(id);
      return id;
    default:
      claim(ledger, id, on); // attempting, held
      return id;
  }
}

/** Every page of a query, following nextCursor; `between` runs after each page is read. */
function walk(ledger: Ledger, query: Parameters<Ledger['listDeliveries']>[0], between: () => void = () => {}): DeliveryRow[][] {
  const pages = [ledger.listDeliveries(query)];
  between();
  while (pages.at(-1)!.nextCursor) {
    pages.push(ledger.listDeliveries({ ...query, cursor: pages.at(-1)!.nextCursor! }));
    between();
  }
  pages.forEach((page, index) => expect(page.page).toBe(index + 1));
  return pages.map((page) => [...page.deliveries]);
}

const newestFirst = (a: DeliveryRow, b: DeliveryRow) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

describe('keyset pages of the Deliveries list', () => {
  const QUERIES: { filter?: DeliveryFilter; platform?: string }[] = [
    {},
    { filter: 'owed' },
    { filter: 'abandoned' },
    { filter: 'delivered' },
    { platform: 'irc' },
    { filter: 'owed', platform: 'irc' },
    { filter: 'abandoned', platform: 'local' },
    { filter: 'delivered', platform: 'irc' },
  ];

  it.each(QUERIES)('chain without gaps or repeats under ties in created_at, while rows are recorded between reads (%o)', (query) => {
    const { ledger, clock, db } = setup();
    let n = 0;
    // Seven rows per millisecond: a page boundary falls inside a tie.
    const record = () => {
      if (n % 7 === 0) clock.advance(1);
      return recordInState(ledger, 1_000 + n++, n % 3 === 0 ? 'local' : 'irc');
    };
    db.transaction(() => {
      for (let i = 0; i < 6 * PAGE_SIZE + 11; i++) record();
    })();
    const before = walk(ledger, query).flat();
    expect(before.length).toBeGreaterThan(PAGE_SIZE);

    // Rows recorded meanwhile are newer than every cursor handed out: the walk neither repeats nor skips.
    const seen = walk(ledger, query, () => record()).flat();
    const ids = seen.map((row) => row.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(before.map((row) => row.id));
    expect([...seen].sort(newestFirst)).toEqual(seen);
    // Every page but the last is full, and the total counts the same rows.
    expect(ledger.listDeliveries(query).total).toBe(walk(ledger, query).flat().length);
    expectNoSortOrScan(db.name, query);
  });

  it('a tab lists the same rows whichever way it is read: its state list covers its expression and no more', () => {
    const { ledger, db } = setup();
    db.transaction(() => {
      for (let n = 0; n < 120; n++) recordInState(ledger, 5_000 + n, 'irc');
    })();
    const all = walk(ledger, {}).flat();
    expect(all).toHaveLength(120);
    for (const filter of ['owed', 'abandoned', 'delivered'] as const) {
      const rows = walk(ledger, { filter }).flat();
      const states = new Set(rows.map((row) => row.state));
      expect([...states].every((state) => FILTER_STATES[filter].includes(state))).toBe(true);
      // Each listed state has at least one row of the tab: no seek through a state that never matches.
      expect(FILTER_STATES[filter].every((state) => states.has(state))).toBe(true);
    }
    expect(walk(ledger, { filter: 'owed' }).flat().length).toBe(ledger.owedCount());
    for (const state of DELIVERY_STATES) {
      expect(walk(ledger, { state }).flat().map((row) => row.id)).toEqual(all.filter((row) => row.state === state).map((row) => row.id));
    }
  });

  it('lists rows of more platforms than one page merges seeks for in the same order, sorting instead', () => {
    const { ledger, clock, db } = setup();
    const platforms = Array.from({ length: Math.ceil(MAX_SEEKS / DELIVERY_STATES.length) + 1 }, (_, i) => `platform-${i}`);
    db.transaction(() => {
      for (let n = 0; n < 3 * PAGE_SIZE; n++) {
        if (n % 4 === 0) clock.advance(1);
        recordInState(ledger, 9_000 + n, platforms[(n * 7) % platforms.length]!);
      }
    })();
    for (const query of [{}, { filter: 'owed' as const }, { filter: 'delivered' as const }]) {
      const rows = walk(ledger, query).flat();
      expect(new Set(rows.map((row) => row.id)).size).toBe(rows.length);
      expect([...rows].sort(newestFirst)).toEqual(rows);
      expect(ledger.listDeliveries(query).total).toBe(rows.length);
      // The same rows as the platforms listed one by one.
      const byPlatform = platforms.flatMap((platform) => walk(ledger, { ...query, platform }).flat()).sort(newestFirst);
      expect(rows.map((row) => row.id)).toEqual(byPlatform.map((row) => row.id));
    }
    expect(walk(ledger, {}).flat()).toHaveLength(3 * PAGE_SIZE);
  });

  it('lists nothing, with a total of 0, from an empty ledger', () => {
    const { ledger } = setup();
    expect(ledger.listDeliveries()).toMatchObject({ deliveries: [], total: 0, hasMore: false, nextCursor: null });
    expect(ledger.listDeliveries({ filter: 'owed', platform: 'irc' })).toMatchObject({ deliveries: [], total: 0 });
  });

  it('refuses a cursor it did not make, and a cursor with a page', () => {
    const { ledger } = setup();
    for (let n = 0; n < 60; n++) ledger.recordObligation(reply(7_000 + n));
    const next = ledger.listDeliveries().nextCursor!;
    expect(() => ledger.listDeliveries({ cursor: 'not-a-cursor' })).toThrow(BadCursorError);
    expect(() => ledger.listDeliveries({ cursor: next.slice(0, -3) })).toThrow(BadCursorError);
    expect(() => ledger.listDeliveries({ cursor: next, page: 2 })).toThrow(BadCursorError);
    expect(ledger.listDeliveries({ cursor: next })).toMatchObject({ page: 2, hasMore: false, nextCursor: null });
  });
});

/**
 * The query plan of a later page: the history — the bulk of a ledger, in
 * millions — only through index seeks, never scanned or sorted; the outbox
 * (what is in flight, owed or given up: small) is read whole and sorted.
 */
function expectNoSortOrScan(file: string, query: { filter?: DeliveryFilter; platform?: string }): void {
  // A connection of its own, so the list prepares its statements afresh and they can be captured.
  const db = openTestDb(file);
  const ledger = testLedger(db, new ManualClock());
  const plans = preparedPlans(db, () => {
    const next = ledger.listDeliveries(query).nextCursor;
    expect(next).not.toBeNull();
    ledger.listDeliveries({ ...query, cursor: next! });
  });
  // The first page's keys, its rows by key (outbox, history), the count and the page after a cursor
  // (and, without a platform, the ledger's platforms).
  expect(plans).toHaveLength(query.platform === undefined ? 6 : 5);
  for (const { sql, plan } of plans) {
    expect(plan, sql).not.toMatch(/^SCAN ledger_history$/m);
    if (/FROM ledger_history WHERE row = \?$/.test(sql)) expect(plan, sql).toMatch(/SEARCH ledger_history USING INTEGER PRIMARY KEY/);
    else if (/FROM ledger_history/.test(sql)) expect(plan, sql).toMatch(/(SEARCH|SCAN) ledger_history USING (COVERING )?INDEX ledger_history_(list|delivered)/);
    // A sort of a page is the outbox's: it comes right after its scan, never after a seek of the history
    // (the platforms' list sorts the few names it merges).
    if (!sql.trimStart().startsWith('WITH RECURSIVE listed')) expect(plan, sql).not.toMatch(/ledger_history_list[^\n]*\n(?:[^\n]*\n)?USE TEMP B-TREE FOR ORDER BY/);
  }
  db.close();
}
