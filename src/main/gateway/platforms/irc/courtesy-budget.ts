/**
 * How many courtesy lines (CTCP VERSION answers, "only answers its owner"
 * notices) strangers can draw from the bot: one per sender per `perSenderMs`,
 * and at most `overall` per `windowMs` from everyone together, so a crowd of
 * nicks cannot make the bot flood itself off the server either. The lines
 * themselves still wait for the pacer like every other line. Pairing codes
 * draw on the same shared budget (`takeShared`); the ones it holds back are
 * owed and go out as it frees (access/pairing-teller.ts).
 */
export interface CourtesyLimits {
  readonly perSenderMs: number;
  readonly overall: number;
  readonly windowMs: number;
}

export const DEFAULT_COURTESY: CourtesyLimits = { perSenderMs: 60_000, overall: 10, windowMs: 60_000 };

/** Senders remembered at most; older ones are pruned first (a stranger cannot grow memory without bound). */
const MAX_SENDERS = 1_000;

export class CourtesyBudget {
  private readonly lastBySender = new Map<string, number>();
  private recent: number[] = [];

  constructor(
    private readonly limits: CourtesyLimits,
    private readonly now: () => number,
  ) {}

  /** Spends one line for `sender` (already case-folded) if the budget allows it. */
  take(sender: string): boolean {
    const now = this.now();
    const last = this.lastBySender.get(sender);
    if (last !== undefined && now - last < this.limits.perSenderMs) return false;
    this.recent = this.recent.filter((at) => now - at < this.limits.windowMs);
    if (this.recent.length >= this.limits.overall) return false;
    this.recent.push(now);
    this.lastBySender.delete(sender);
    this.lastBySender.set(sender, now);
    if (this.lastBySender.size > MAX_SENDERS) {
      const oldest = this.lastBySender.keys().next().value;
      if (oldest !== undefined) this.lastBySender.delete(oldest);
    }
    return true;
  }

  /**
   * Spends one line from the shared budget only, for a line the per-sender rule
   * need not cover: a pairing code, which the pairing store already sends each
   * sender at most once an hour.
   */
  takeShared(): boolean {
    const now = this.now();
    this.recent = this.recent.filter((at) => now - at < this.limits.windowMs);
    if (this.recent.length >= this.limits.overall) return false;
    this.recent.push(now);
    return true;
  }

  /** Milliseconds until the shared budget has a line free again (0 when it has one now). */
  sharedWaitMs(): number {
    const now = this.now();
    this.recent = this.recent.filter((at) => now - at < this.limits.windowMs);
    return this.recent.length < this.limits.overall ? 0 : this.recent[0]! + this.limits.windowMs - now;
  }
}
