import { DELIVERY_STATES, type DeliveryFilter, type DeliveryPage, type DeliveryRow, type DeliveryState } from '../../../shared/api';
import { decodeCursor, encodeCursor } from '../../../shared/page-cursor';
import type { LedgerContext } from './context';
import { cachedStatement, durably, type Db } from '../db/database';
import { loadObligation, outboxRowOf, toDeliveryRow, type ObligationSql } from './rows';
import { GIVEN_UP, OWED, OWED_ROWS } from './states';
import { obligationSql } from './transitions';

export const PAGE_SIZE = 50;

/** The abandon reason of a row the user discarded (counted apart from the ledger's own give-ups). */
export const DISCARDED = 'discarded by the user';

export type ActionResult =
  | { readonly ok: true; readonly row: DeliveryRow }
  | { readonly ok: false; readonly reason: 'not-found' | 'conflict'; readonly message: string };

export interface DeliveryQuery {
  readonly state?: DeliveryState;
  /** A tab of the window: owed, abandoned or delivered (combined with `state` if both are given). */
  readonly filter?: DeliveryFilter;
  readonly platform?: string;
  /** A page's `nextCursor`: the page after it, read by an index seek. */
  readonly cursor?: string;
  /** For old callers: page N by OFFSET, which reads and skips every row before it. Not with `cursor`. */
  readonly page?: number;
}

/** The window's tabs, in the ledger's one vocabulary (states.ts). */
const FILTERS: Record<DeliveryFilter, string> = {
  owed: OWED,
  abandoned: GIVEN_UP,
  delivered: `state = 'delivered'`,
};

/**
 * The states a tab's rows can be in. Delivered rows are in the history (or,
 * the last few hundred, still in the outbox); every other state only in the
 * outbox. A page merges the outbox's rows of the tab (read whole: it holds what
 * is in flight, owed or given up) with one index seek per platform of the
 * history on (platform, created_at, id), each already in list order, so no
 * query sorts the history or skips rows to reach a page.
 */
export const FILTER_STATES: Record<DeliveryFilter, readonly DeliveryState[]> = {
  owed: ['pending', 'attempting', 'failed'],
  abandoned: ['abandoned', 'failed'],
  delivered: ['delivered'],
};

/**
 * Every platform the ledger has a row of: the outbox read whole, the history
 * from the first column of its listing index, one seek per platform however
 * many rows each has.
 */
export const LEDGER_PLATFORMS = `WITH RECURSIVE listed (platform) AS (
    SELECT (SELECT min(platform) FROM ledger_history)
    UNION ALL
    SELECT (SELECT min(platform) FROM ledger_history WHERE platform > listed.platform) FROM listed WHERE listed.platform IS NOT NULL
  ) SELECT platform FROM listed WHERE platform IS NOT NULL
  UNION SELECT DISTINCT platform FROM ledger_outbox`;

/**
 * The most history seeks one page merges. More platforms than this and the
 * history's part of a page is one query that sorts what it reads instead:
 * slower, never wrong.
 */
export const MAX_SEEKS = 100;

/** A row of any of the platforms bound as one JSON array. */
const OF_PLATFORMS = 'platform IN (SELECT value FROM json_each(?))';

/** A cursor the caller made up or mangled; the API refuses it before it gets here (bad-request). */
export class BadCursorError extends Error {
  override readonly name = 'BadCursorError';
}

/** True while a live sender (this process, or a live instance elsewhere) holds the row. */
export type SenderAlive = (row: ObligationSql) => boolean;

/** Newest first (created_at, then id, both descending), optionally of one state, one tab and one platform. */
export function listDeliveries(ctx: LedgerContext, query: DeliveryQuery = {}): DeliveryPage {
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  if (query.cursor !== undefined && !after) throw new BadCursorError('not a cursor from a previous page of deliveries');
  if (after && query.page !== undefined) throw new BadCursorError('give a cursor or a page, not both');
  const page = after?.page ?? query.page ?? 1;
  const states = statesOf(query);
  const platforms = platformsOf(ctx.db, query);
  if (states.length === 0 || platforms.length === 0) return { deliveries: [], page, pageSize: PAGE_SIZE, hasMore: false, nextCursor: null, total: 0 };
  const filter = query.filter ? [`(${FILTERS[query.filter]})`] : [];
  const seek = after ? ['(created_at, id) < (?, ?)'] : [];
  const seekArgs = after ? [after.at, after.id] : [];
  // The page's keys first — the history's read from its listing index alone, the outbox's
  // sorted as small tuples — then the rows of the page, each by its key.
  const parts: { sql: string; args: unknown[] }[] = [
    {
      sql: `SELECT created_at, id, 0 AS delivered, row FROM ledger_outbox
            WHERE ${[OF_PLATFORMS, `state IN (${states.map(() => '?').join(', ')})`, ...filter, ...seek].join(' AND ')}`,
      args: [JSON.stringify(platforms), ...states, ...seekArgs],
    },
  ];
  if (states.includes('delivered')) {
    const seeks = platforms.length <= MAX_SEEKS ? platforms.map((platform) => ({ term: 'platform = ?', arg: platform })) : [{ term: OF_PLATFORMS, arg: JSON.stringify(platforms) }];
    for (const { term, arg } of seeks) {
      parts.push({ sql: `SELECT created_at, id, 1 AS delivered, row FROM ledger_history WHERE ${[term, ...seek].join(' AND ')}`, args: [arg, ...seekArgs] });
    }
  }
  // One row more than a page tells whether another page exists.
  const keys = cachedStatement(ctx.db, `${parts.map(({ sql }) => sql).join(' UNION ALL ')} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`).all(
    ...parts.flatMap(({ args }) => args),
    PAGE_SIZE + 1,
    after ? 0 : (page - 1) * PAGE_SIZE,
  ) as { delivered: number; row: number }[];
  const inOutbox = cachedStatement(ctx.db, 'SELECT * FROM ledger_outbox WHERE row = ?');
  const inHistory = cachedStatement(ctx.db, 'SELECT * FROM ledger_history WHERE row = ?');
  const rows = keys.map((key) => (key.delivered ? inHistory : inOutbox).get(key.row) as ObligationSql);
  const shown = rows.slice(0, PAGE_SIZE);
  const last = shown.at(-1);
  const hasMore = rows.length > PAGE_SIZE && last !== undefined;
  return {
    deliveries: shown.map(toDeliveryRow),
    page,
    pageSize: PAGE_SIZE,
    hasMore,
    nextCursor: hasMore ? encodeCursor({ at: last.created_at, id: last.id, page: page + 1 }) : null,
    total: countOf(ctx.db, query, states, platforms),
  };
}

/**
 * How many rows a list has (its `total`, which the window needs to size its
 * list; counted on every page): the outbox's read whole, the history's — the
 * bulk of a ledger, in millions — by SQLite's count of a whole table, or of
 * one platform's range of the listing index.
 */
export function countDeliveries(db: Db, query: Omit<DeliveryQuery, 'cursor' | 'page'> = {}): number {
  return countOf(db, query, statesOf(query), platformsOf(db, query));
}

/** `countDeliveries` with the query's states and platforms already read (a page reads them once). */
function countOf(db: Db, query: Pick<DeliveryQuery, 'filter' | 'platform'>, states: readonly DeliveryState[], platforms: readonly string[]): number {
  if (states.length === 0 || platforms.length === 0) return 0;
  const terms = [OF_PLATFORMS, `state IN (${states.map(() => '?').join(', ')})`];
  if (query.filter) terms.push(`(${FILTERS[query.filter]})`);
  const parts = [`(SELECT count(*) FROM ledger_outbox WHERE ${terms.join(' AND ')})`];
  const args: string[] = [JSON.stringify(platforms), ...states];
  if (states.includes('delivered')) {
    if (query.platform === undefined) {
      parts.push('(SELECT count(*) FROM ledger_history)');
    } else {
      parts.push('(SELECT count(*) FROM ledger_history WHERE platform = ?)');
      args.push(query.platform);
    }
  }
  return (cachedStatement(db, `SELECT ${parts.join(' + ')} AS n`).get(...args) as { n: number }).n;
}

/** The states a list's rows can be in: its tab's, narrowed to one state if asked. */
function statesOf(query: Pick<DeliveryQuery, 'filter' | 'state'>): readonly DeliveryState[] {
  return (query.filter ? FILTER_STATES[query.filter] : DELIVERY_STATES).filter((state) => !query.state || state === query.state);
}

/** The platform asked for, or every platform the ledger has a row of. */
function platformsOf(db: Db, query: Pick<DeliveryQuery, 'platform'>): readonly string[] {
  if (query.platform !== undefined) return [query.platform];
  return (cachedStatement(db, LEDGER_PLATFORMS).all() as { platform: string }[]).map((row) => row.platform);
}

/** The whole reply, for "copy text"; rows stay light because lists carry only a preview. */
export function deliveryText(ctx: LedgerContext, id: string): string | undefined {
  return loadObligation(ctx.db, id)?.content;
}

export function getDelivery(ctx: LedgerContext, id: string): DeliveryRow | undefined {
  const row = loadObligation(ctx.db, id);
  return row && toDeliveryRow(row);
}

/**
 * The user asks to try again a row that failed or was given up: it becomes
 * pending with a fresh attempt budget and stale clock, owned by nobody, so the
 * next sweep of the gateway sends it. Refused while a live sender still holds
 * it (discarded mid-send, its sender not yet stopped): two senders on one reply
 * is what the receipts exist to prevent. Chunks already delivered stay
 * delivered; one that may have arrived keeps its marker.
 */
export function retryDelivery(ctx: LedgerContext, id: string, senderAlive: SenderAlive): ActionResult {
  const row = loadObligation(ctx.db, id);
  if (!row) return { ok: false, reason: 'not-found', message: `no delivery with id ${id}` };
  if (row.state !== 'failed' && row.state !== 'abandoned') {
    return { ok: false, reason: 'conflict', message: `delivery ${id} is ${describeState(row)}; only a failed or given-up delivery can be retried` };
  }
  if (senderAlive(row)) {
    return { ok: false, reason: 'conflict', message: `delivery ${id} is still being sent; try again once that send has stopped` };
  }
  if (laterInFlight(ctx, row)) {
    // Retried now it would go out beside a later reply of its conversation, their parts interleaved.
    return { ok: false, reason: 'conflict', message: `a later reply of this conversation is being sent right now; retry ${id} once it is done` };
  }
  // The user's decisions are fsynced: a power cut must not undo them.
  const changes = durably(ctx.db, () => cachedStatement(ctx.db, obligationSql('retry')).run(retryParams(ctx, row)).changes);
  return settle(ctx, id, changes, (state) => `delivery ${id} changed meanwhile (now ${state}); try again`);
}

/**
 * "Retry all" for one platform (after fixing its settings, or once it is back):
 * every failed or given-up row of it becomes pending as in `retryDelivery`.
 * Rows the user discarded stay discarded: that was a decision, not a failure.
 * A row a live sender still holds is left alone.
 */
export function retryPlatform(ctx: LedgerContext, platform: string, senderAlive: SenderAlive): number {
  const ids = durably(ctx.db, () => {
    const found = ctx.db
      .prepare(
        `SELECT * FROM ledger_outbox
         WHERE platform = ? AND (state = 'failed' OR (state = 'abandoned' AND abandon_reason IS NOT '${DISCARDED}'))`,
      )
      .all(platform) as ObligationSql[];
    const retry = cachedStatement(ctx.db, obligationSql('retry'));
    return found
      .filter((row) => !senderAlive(row) && !laterInFlight(ctx, row) && retry.run(retryParams(ctx, row)).changes === 1)
      .map(({ id }) => id);
  });
  for (const id of ids) ctx.changed(id);
  return ids.length;
}

/**
 * The user gives up on a row: it becomes abandoned and no sweep sends it again.
 * A sender in the middle of it finishes the chunk on its way (the ledger records
 * that it arrived), then finds the row discarded and stops.
 */
export function discardDelivery(ctx: LedgerContext, id: string): ActionResult {
  const changes = durably(
    ctx.db,
    () => {
      const row = outboxRowOf(ctx.db, id);
      return row === undefined ? 0 : cachedStatement(ctx.db, obligationSql('discard')).run({ row, now: ctx.clock.now(), reason: DISCARDED }).changes;
    },
  );
  const row = loadObligation(ctx.db, id);
  if (row?.state === 'abandoned' && changes === 0) return { ok: true, row: toDeliveryRow(row) };
  return settle(ctx, id, changes, (state) => `delivery ${id} is already ${state}; there is nothing to discard`);
}

/** A later reply of the row's conversation is being sent: the row must not become the head under it. */
function laterInFlight(ctx: LedgerContext, row: ObligationSql): boolean {
  return (
    cachedStatement(ctx.db, `SELECT 1 FROM ${OWED_ROWS} WHERE ${OWED} AND session_key = ? AND row > ? AND state = 'attempting' LIMIT 1`).get(
      row.session_key,
      row.row,
    ) !== undefined
  );
}

function retryParams(ctx: LedgerContext, row: ObligationSql) {
  return { row: row.row, now: ctx.clock.now(), readState: row.state, readOwner: row.owner_instance, readFence: row.fence };
}

function describeState(row: ObligationSql): string {
  return row.state === 'failed' && row.next_attempt_at !== null ? 'waiting for its next attempt' : row.state;
}

function settle(ctx: LedgerContext, id: string, changes: number, conflict: (state: DeliveryState) => string): ActionResult {
  const row = loadObligation(ctx.db, id);
  if (!row) return { ok: false, reason: 'not-found', message: `no delivery with id ${id}` };
  if (changes !== 1) return { ok: false, reason: 'conflict', message: conflict(row.state) };
  ctx.changed(id);
  return { ok: true, row: toDeliveryRow(row) };
}
