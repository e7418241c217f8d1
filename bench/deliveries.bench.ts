import { join } from 'node:path';
import { systemClock } from '../src/main/gateway/clock';
import { openDatabase } from '../src/main/gateway/db/database';
import { homingMigrations } from '../src/main/gateway/db/migrations';
import { Ledger } from '../src/main/gateway/ledger/ledger';
import { countDeliveries } from '../src/main/gateway/ledger/operator-actions';
import { SessionReader } from '../src/main/gateway/session/session-reader';
import { LARGE, sharedFilledDataDir } from './filled-data-dir';
import { medianMs, type Bench } from './harness';

const DEEP_PAGE = 19_000;
const RUNS = 31;

/**
 * The Deliveries list's delivered tab with 1 000 000 delivered rows, 50 a
 * page: page 1 against page 19 000 read after its cursor (keyset: an index
 * seek past the previous page's last row), both through `Ledger.listDeliveries`
 * as the API calls it, and the same deep page read the old way (OFFSET) for
 * comparison. The cursor of page 19 000 is what page 18 999 returns as its
 * nextCursor; page 18 999 is read once, by its number. Each page also counts
 * the tab's rows (`total`), which is printed apart. Then the session list, first page against its last.
 */
const bench: Bench = {
  name: `deliveries — page 1 vs page ${DEEP_PAGE.toLocaleString('en')} of ${LARGE.delivered.toLocaleString('en')} delivered rows by cursor, and the session list, median of ${RUNS}`,
  async run(context) {
    const { dir } = sharedFilledDataDir(LARGE);
    const db = openDatabase(join(dir, 'homing.db'), { migrations: homingMigrations });
    try {
      const ledger = new Ledger({ db, clock: systemClock });
      const delivered = { filter: 'delivered' } as const;
      const before = ledger.listDeliveries({ ...delivered, page: DEEP_PAGE - 1 });
      const cursor = before.nextCursor;
      if (!cursor || ledger.listDeliveries({ ...delivered, cursor }).page !== DEEP_PAGE) throw new Error(`no page ${DEEP_PAGE} to read`);
      const first = medianMs(RUNS, () => ledger.listDeliveries(delivered));
      const deep = medianMs(RUNS, () => ledger.listDeliveries({ ...delivered, cursor }));
      const offset = medianMs(5, () => ledger.listDeliveries({ ...delivered, page: DEEP_PAGE }));
      const countMs = medianMs(RUNS, () => countDeliveries(db, delivered));
      context.report('delivered page 1', { ms: first, rows: before.total });
      context.report(`delivered page ${DEEP_PAGE} after its cursor`, { ms: deep });
      context.report(`ratio page ${DEEP_PAGE} / page 1`, { ratio: deep / first, target: '≤ 2' });
      // The count listDeliveries makes for `total`, alone.
      context.report('  of which: counting the total (each page)', { ms: countMs, share_of_page_1: countMs / first });
      context.report(`delivered page ${DEEP_PAGE} by number (OFFSET, old)`, { ms: offset, ratio_to_cursor: offset / deep });

      const reader = new SessionReader(db, dir);
      let page = reader.list();
      let next: string | null = null;
      while (page.nextCursor) {
        next = page.nextCursor;
        page = reader.list({ cursor: next });
      }
      const lastPage = page.page;
      const sessionsFirst = medianMs(RUNS, () => reader.list());
      const sessionsLast = medianMs(RUNS, () => reader.list({ cursor: next! }));
      const sessionsOffset = medianMs(RUNS, () => reader.list({ page: lastPage }));
      context.report('sessions page 1', { ms: sessionsFirst, sessions: page.total });
      context.report(`sessions page ${lastPage} (the last) after its cursor`, { ms: sessionsLast, ratio: sessionsLast / sessionsFirst });
      context.report(`sessions page ${lastPage} by number (OFFSET, old)`, { ms: sessionsOffset, ratio: sessionsOffset / sessionsFirst });
    } finally {
      db.close();
    }
  },
};
export default bench;
