import type { LedgerHealth } from '../../../shared/api';
import type { Clock } from '../clock';
import type { Logger } from '../logger';

/**
 * Counts the ledger's own failures (busy, disk full, read-only, corrupt, a
 * failed fdatasync). A reply the ledger could not record is still sent; one it
 * recorded waits for it (docs/delivery.md). This is how the failure stays
 * visible — in the log, through the API and as an event.
 */
export class LedgerHealthMonitor {
  private failures = 0;
  private lastError: string | null = null;
  private lastFailureAt: number | null = null;
  /** Whether the latest ledger call succeeded: a failure once an hour ago does not keep the alarm on. */
  private healthy = true;

  constructor(
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly onFailure: (health: LedgerHealth) => void = () => {},
  ) {}

  /** Runs one ledger call; on failure logs and counts it and returns undefined. Never throws. */
  guard<T>(operation: string, id: string, call: () => T): T | undefined {
    try {
      const result = call();
      this.healthy = true;
      return result;
    } catch (error) {
      this.failed(operation, id, error);
      return undefined;
    }
  }

  /** Counts and logs a ledger call that failed outside `guard` (a group commit's). */
  failed(operation: string, id: string, error: unknown): void {
    this.healthy = false;
    this.failures += 1;
    this.lastError = `${operation}: ${error instanceof Error ? error.message : String(error)}`;
    this.lastFailureAt = this.clock.now();
    this.logger.error('the delivery ledger failed', { operation, obligation: id, error });
    try {
      this.onFailure(this.health());
    } catch (listenerError) {
      this.logger.error('a ledger-health listener failed', { error: listenerError });
    }
  }

  /** A ledger call outside `guard` succeeded. */
  succeeded(): void {
    this.healthy = true;
  }

  health(): LedgerHealth {
    return { ok: this.healthy, failures: this.failures, lastError: this.lastError, lastFailureAt: this.lastFailureAt };
  }
}
