/**
 * How many strangers a platform adapter answers with a pairing code: at most
 * `max` in any `windowMs` (20 per 10 minutes), so a flood of strangers cannot
 * make the bot spam, or get it rate-limited on its platform.
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
}
