import type { Clock } from '../../clock';

export interface PacingOptions {
  /** Lines that may go out back to back after a quiet period. */
  readonly burst: number;
  /** One more line per this many milliseconds once the burst is spent. */
  readonly intervalMs: number;
}

/** Servers disconnect clients that flood ("Excess Flood"); this keeps well under their limits. */
export const DEFAULT_PACING: PacingOptions = { burst: 4, intervalMs: 400 };

const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A token bucket for outgoing lines. Callers are served in order (one shared queue
 * for replies and refusal notices), so a long reply cannot be overtaken mid-way.
 */
export class Pacer {
  private tokens: number;
  private last: number;
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly options: PacingOptions,
    private readonly clock: Pick<Clock, 'monotonic'>,
    private readonly sleep: (ms: number) => Promise<void> = realSleep,
  ) {
    this.tokens = options.burst;
    this.last = clock.monotonic();
  }

  /** Resolves when one more line may be written. */
  take(): Promise<void> {
    const turn = this.tail.then(() => this.waitForToken());
    this.tail = turn.catch(() => undefined);
    return turn;
  }

  private async waitForToken(): Promise<void> {
    this.refill();
    if (this.tokens < 1) {
      await this.sleep(Math.ceil((1 - this.tokens) * this.options.intervalMs));
      this.refill();
    }
    this.tokens = Math.max(0, this.tokens - 1);
  }

  private refill(): void {
    const now = this.clock.monotonic();
    const earned = this.options.intervalMs > 0 ? (now - this.last) / this.options.intervalMs : Infinity;
    this.tokens = Math.min(this.options.burst, this.tokens + earned);
    this.last = now;
  }
}
