import type { DeliveryState } from '../../../shared/api';

export type ObligationState = DeliveryState;

/**
 * owed: not sent yet; sending: a send began and its outcome is unknown (it may
 * have arrived); delivered: the platform confirmed it.
 */
export type ChunkState = 'owed' | 'sending' | 'delivered';

/**
 * The one definition of "owed": a reply Homing still has to send. Pending,
 * being sent, or failed with a retry scheduled. A reply that failed for good
 * (no next attempt), was abandoned or discarded, or was delivered is settled.
 * The CLI, the API, the tray, the window and the sweep all count with this.
 *
 * The text is repeated verbatim in the partial index `ledger_outbox_owed`
 * (ledger-009): SQLite uses a partial index only for a query whose WHERE clause
 * contains the index's own.
 */
export const OWED = owedOf();

/** The outbox through its owed index (ledger-009): a query naming it fails loudly if it cannot use it. */
export const OWED_ROWS = 'ledger_outbox INDEXED BY ledger_outbox_owed';

/** OWED for the row alias `alias` (in sub-queries), or unqualified. */
export function owedOf(alias?: string): string {
  const c = alias ? `${alias}.` : '';
  return `(${c}state IN ('pending', 'attempting') OR (${c}state = 'failed' AND ${c}next_attempt_at IS NOT NULL))`;
}

/** Settled but not delivered: what the window's "Given up" tab shows. */
export const GIVEN_UP = `(state = 'abandoned' OR (state = 'failed' AND next_attempt_at IS NULL))`;

export function isOwed(row: { readonly state: ObligationState; readonly next_attempt_at: number | null }): boolean {
  return row.state === 'pending' || row.state === 'attempting' || (row.state === 'failed' && row.next_attempt_at !== null);
}
