/** The ledger's rules, all overridable (tests shrink them instead of sleeping). */
export interface LedgerPolicy {
  /** Failed sends (a chunk handed to the platform and refused or lost) before a row is abandoned. Claims and crashes spend none. */
  readonly maxAttempts: number;
  /** Owed time (while a gateway was sweeping) after which a row is abandoned. */
  readonly staleAfterMs: number;
  /** Delivered rows are deleted this long after delivery. Owed rows never are. */
  readonly retentionMs: number;
  /** An instance that has not renewed its heartbeat for this long may be dead. */
  readonly leaseMs: number;
  /**
   * The most owed time one sweep may credit. A longer gap since the previous
   * sweep means nobody was running (sleep, gateway closed, clock jump), and that
   * time does not count towards the stale cutoff.
   */
  readonly maxCreditMs: number;
  /** Retry delay after the first failure; doubles per attempt up to backoffMaxMs. */
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
  /** Rows claimed per write transaction: bounds how long a sweep holds the write lock. */
  readonly claimBatchSize: number;
  /** Rows one sweep claims at most; the next sweep takes the rest. */
  readonly sweepLimit: number;
}

export const DEFAULT_POLICY: LedgerPolicy = {
  maxAttempts: 5,
  staleAfterMs: 24 * 60 * 60 * 1000,
  retentionMs: 7 * 24 * 60 * 60 * 1000,
  leaseMs: 30_000,
  maxCreditMs: 5 * 60 * 1000,
  backoffBaseMs: 5_000,
  backoffMaxMs: 15 * 60 * 1000,
  claimBatchSize: 100,
  sweepLimit: 500,
};

/** Delay before retry number `attempts + 1`, honouring the platform's retry-after. */
export function retryDelayMs(policy: LedgerPolicy, attempts: number, retryAfterMs: number | undefined): number {
  const backoff = Math.min(policy.backoffMaxMs, policy.backoffBaseMs * 2 ** Math.max(0, attempts - 1));
  return Math.max(backoff, retryAfterMs ?? 0);
}
