import type { DeliveryPage, DeliveryRow, DeliveryState } from '../../../shared/api';
import type { LedgerContext } from './context';
import { loadObligation, toDeliveryRow, type ObligationSql } from './rows';
import { AWAKE_NOW } from './send-path';

export const PAGE_SIZE = 50;

export type ActionResult =
  | { readonly ok: true; readonly row: DeliveryRow }
  | { readonly ok: false; readonly reason: 'not-found' | 'conflict'; readonly message: string };

/** Newest first, optionally of one state; pages count from 1. */
export function listDeliveries(ctx: LedgerContext, query: { state?: DeliveryState; page?: number } = {}): DeliveryPage {
  const page = query.page ?? 1;
  const offset = (page - 1) * PAGE_SIZE;
  // One row more than a page tells whether another page exists without a count
  // over a table that may hold a million delivered rows.
  const rows = (
    query.state
      ? ctx.db
          .prepare('SELECT * FROM ledger_obligations WHERE state = ? ORDER BY created_at DESC, id LIMIT ? OFFSET ?')
          .all(query.state, PAGE_SIZE + 1, offset)
      : ctx.db
          .prepare('SELECT * FROM ledger_obligations ORDER BY created_at DESC, id LIMIT ? OFFSET ?')
          .all(PAGE_SIZE + 1, offset)
  ) as ObligationSql[];
  return {
    deliveries: rows.slice(0, PAGE_SIZE).map(toDeliveryRow),
    page,
    pageSize: PAGE_SIZE,
    hasMore: rows.length > PAGE_SIZE,
  };
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
 * The user gives up on a row: it becomes abandoned and is never sent again by a
 * sweep. A sender already in the middle of it may still finish; the ledger then
 * records it as delivered, because it was.
 */
export function discardDelivery(ctx: LedgerContext, id: string): ActionResult {
  const now = ctx.clock.now();
  const changes = ctx.db
    .prepare(
      `UPDATE ledger_obligations
         SET state = 'abandoned', abandon_reason = 'discarded by the user', next_attempt_at = NULL, updated_at = ?
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
