/**
 * How long a platform adapter waits before its `attempt`-th reconnect in a row:
 * 1 s, 2 s, 4 s … up to 5 minutes, each ±20 % so that many gateways cut off by
 * one outage do not all come back in the same second.
 */
export function defaultReconnectDelay(attempt: number): number {
  const base = Math.min(300_000, 1_000 * 2 ** Math.min(attempt - 1, 16));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

/** Failed attempts in a row and the wait before the next; a success starts again from the first step. */
export class ReconnectBackoff {
  private failures = 0;

  constructor(private readonly delay: (attempt: number) => number = defaultReconnectDelay) {}

  /** The wait before the next attempt, counting one more failure. */
  next(): number {
    return this.delay(++this.failures);
  }

  reset(): void {
    this.failures = 0;
  }
}
