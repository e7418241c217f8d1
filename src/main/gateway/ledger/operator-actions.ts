import type { DeliveryFilter, DeliveryPage, DeliveryRow, DeliveryState } from '../../../shared/api';
import type { LedgerContext } from './context';
import { loadObligation, toDeliveryRow, type ObligationSql } from './rows';
import { AWAKE_NOW } from './send-path';

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
  readonly page?: number;
}

const FILTER_STATES: Record<DeliveryFilter, readonly DeliveryState[]> = {
  owed: ['pending', 'attempting', 'failed'],
  abandoned: ['abandoned'],
  delivered: ['delivered'],
};

/** Newest first, optionally of one state, one tab and one platform; pages count from 1. */
export function listDeliveries(ctx: LedgerContext, query: DeliveryQuery = {}): DeliveryPage {
  const page = query.page ?? 1;
  const offset = (page - 1) * PAGE_SIZE;
  const where: string[] = [];
  const args: (string | number)[] = [];
  if (query.state) {
    where.push('state = ?');
    args.push(query.state);
  }
  if (query.filter) {
    const states = FILTER_STATES[query.filter];
    where.push(`state IN (${states.map(() => '?').join(', ')})`);
    args.push(...states);
  }
  if (query.platform) {
    where.push('platform = ?');
    args.push(query.platform);
  }
  const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
  // One row more than a page tells whether another page exists; the count runs
  // on the (state, created_at) index, and the window needs it to size its list.
  const rows = ctx.db
    .prepare(`SELECT * FROM ledger_obligations ${clause} ORDER BY created_at DESC, id LIMIT ? OFFSET ?`)
    .all(...args, PAGE_SIZE + 1, offset) as ObligationSql[];
  const { n } = ctx.db.prepare(`SELECT count(*) AS n FROM ledger_obligations ${clause}`).get(...args) as { n: number };
  return {
    deliveries: rows.slice(0, PAGE_SIZE).map(toDeliveryRow),
    page,
    pageSize: PAGE_SIZE,
    hasMore: rows.length > PAGE_SIZE,
    total: n,
  };
}

/** The whole reply, for "copy text"; rows stay light because lists carry only a preview. */
export function deliveryText(ctx: LedgerContext, id: string): string | undefined {
  const row = ctx.db.prepare('SELECT content FROM ledger_obligations WHERE id = ?').get(id) as { content: string } | undefined;
  return row?.content;
}

export function getDelivery(ctx: LedgerContext, id: string): DeliveryRow | undefined {
  const row = loadObligation(ctx.db, id);
  return row && toDeliveryRow(row);
}

/**
 * The user asks to try again a row that failed or was abandoned: it becomes
 * pending with a fresh attempt budget and stale clock, owned by nobody, so the
 * next sweep of any gateway with its platform connected sends it. Chunks already
 * delivered stay delivered; one that may have arrived keeps its marker.
 */
export function retryDelivery(ctx: LedgerContext, id: string): ActionResult {
  const now = ctx.clock.now();
  const changes = ctx.db
    .prepare(
      `UPDATE ledger_obligations
         SET state = 'pending', owner_instance = NULL, attempts = 0, owed_since_awake = ${AWAKE_NOW},
             next_attempt_at = NULL, abandon_reason = NULL, updated_at = ?
       WHERE id = ? AND state IN ('failed', 'abandoned')`,
    )
    .run(now, id).changes;
  return settle(ctx, id, changes, (state) => `delivery ${id} is ${state}; only a failed or abandoned delivery can be retried`);
}

/**
 * "Retry all" for one platform (after fixing its settings, or once it is back):
 * every failed or given-up row of it becomes pending as in `retryDelivery`.
 * Rows the user discarded stay discarded: that was a decision, not a failure.
 */
export function retryPlatform(ctx: LedgerContext, platform: string): number {
  const now = ctx.clock.now();
  const ids = ctx.db
    .transaction(() => {
      const found = ctx.db
        .prepare(
          `SELECT id FROM ledger_obligations
           WHERE platform = ? AND (state = 'failed' OR (state = 'abandoned' AND abandon_reason IS NOT '${DISCARDED}'))`,
        )
        .all(platform) as { id: string }[];
      const retry = ctx.db.prepare(
        `UPDATE ledger_obligations
           SET state = 'pending', owner_instance = NULL, attempts = 0, owed_since_awake = ${AWAKE_NOW},
               next_attempt_at = NULL, abandon_reason = NULL, updated_at = ?
         WHERE id = ? AND state IN ('failed', 'abandoned')`,
      );
      return found.filter(({ id }) => retry.run(now, id).changes === 1).map(({ id }) => id);
    })
    .immediate();
  for (const id of ids) ctx.changed(id);
  return ids.length;
}

/**
 * The user gives up on a row: it becomes abandoned and is never sent again by a
 * sweep. A sender already in the middle of it may still finish; the ledger then
 * records it as delivered, because it was.
 */
export function discardDelivery(ctx: LedgerContext, id: string): ActionResult {
  const now = ctx.clock.now();
  const changes = ctx.db
    .prepare(
      `UPDATE ledger_obligations
         SET state = 'abandoned', abandon_reason = '${DISCARDED}', next_attempt_at = NULL, updated_at = ?
       WHERE id = ? AND state IN ('pending', 'attempting', 'failed')`,
    )
    .run(now, id).changes;
  const row = loadObligation(ctx.db, id);
  if (row?.state === 'abandoned' && changes === 0) return { ok: true, row: toDeliveryRow(row) };
  return settle(ctx, id, changes, (state) => `delivery ${id} is already ${state}; there is nothing to discard`);
}

function settle(ctx: LedgerContext, id: string, changes: number, conflict: (state: DeliveryState) => string): ActionResult {
  const row = loadObligation(ctx.db, id);
  if (!row) return { ok: false, reason: 'not-found', message: `no delivery with id ${id}` };
  if (changes !== 1) return { ok: false, reason: 'conflict', message: conflict(row.state) };
  ctx.changed(id);
  return { ok: true, row: toDeliveryRow(row) };
}
