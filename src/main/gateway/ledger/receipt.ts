/**
 * A claim's proof of ownership: every later write to the row or its chunks
 * presents it, and changes nothing once it is stale (the row was claimed again,
 * retried, or this instance was declared dead). In a file of its own so that
 * the ledger and the sweep, which both hand receipts out, import it from here
 * rather than from each other.
 */
export interface Receipt {
  readonly id: string;
  /** The reply's row in the outbox: every write finds it by this key. */
  readonly row: number;
  readonly owner: string;
  readonly fence: number;
}
