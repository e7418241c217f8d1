import type { ReplyBudget } from './pairing-teller';

/**
 * How many strangers a platform adapter answers with a pairing code: at most
 * `max` in any `windowMs` (20 per 10 minutes), so a flood of strangers cannot
 * make the bot spam, or get it rate-limited on its platform. Codes it holds
 * back are owed, not dropped: the adapter's PairingTeller sends them when
 * `waitMs` says a slot is free.
 */
export class PairingReplyLimit {
  private sent: number[] = [];

  constructor(
    private readonly max = 20,
    private readonly windowMs = 10 * 60 * 1000,
  ) {}

  /** Whether one more pairing reply may go at `now` (a monotonic clock's ms); counts it when it may. */
  take(now: number): boolean {
    this.sent = this.sent.filter((at) => now - at < this.windowMs);
    if (this.sent.length >= this.max) return false;
    this.sent.push(now);
    return true;
  }

  /** Milliseconds from `now` until `take` can succeed again. */
  waitMs(now: number): number {
    this.sent = this.sent.filter((at) => now - at < this.windowMs);
    return this.sent.length < this.max ? 0 : this.sent[0]! + this.windowMs - now;
  }

  /** This limit on a clock, as the teller spends it. */
  on(now: () => number): ReplyBudget {
    return { take: () => this.take(now()), waitMs: () => this.waitMs(now()) };
  }
}
