import type { DeliveryRow } from '../../../shared/api';
import type { Clock } from '../clock';
import type { Db } from '../db/database';
import type { LedgerPolicy } from './policy';
import type { ProcessProbe } from './process-identity';
import { loadObligation, toDeliveryRow, type InsertedRow } from './rows';

/** What the ledger's parts (send path, sweep, operator actions) share. */
export interface LedgerContext {
  readonly db: Db;
  readonly clock: Clock;
  readonly probe: ProcessProbe;
  readonly policy: LedgerPolicy;
  /** The instance this process owns rows as. */
  instanceId(): string;
  /** Announces a row's new state (after the write committed); `row` when the caller has just read it. */
  changed(id: string, row?: InsertedRow): void;
  /** This process holds the row (a claim in hand): its own sweep leaves it alone. */
  holds(id: string): boolean;
  /** Replies still owed (states.ts OWED), counted when the ledger may have changed since the last count (sweep.ts countOwed). */
  owedCount(): number;
}

/**
 * Builds `changed` so the row is only read back, and described, when somebody
 * listens: `listening` says whether anybody does now (default: always).
 */
export function changeNotifier(
  db: Db,
  onChange: ((row: DeliveryRow) => void) | undefined,
  listening: () => boolean = () => true,
): LedgerContext['changed'] {
  if (!onChange) return () => {};
  return (id, known) => {
    if (!listening()) return;
    let row = known;
    try {
      row ??= loadObligation(db, id);
    } catch {
      // The write has committed; failing to read it back for an event must not
      // make the caller believe the write failed.
      return;
    }
    if (row) onChange(toDeliveryRow(row));
  };
}
