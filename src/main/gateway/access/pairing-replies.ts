import { platformTitle } from '../../../shared/platforms';
import type { Logger } from '../logger';
import { PairingTeller, type OwedCodes, type ReplyBudget } from './pairing-teller';

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

/** What a stranger is told on a platform whose window lists pairing requests. */
export function pairingReply(platform: string, code: string): string {
  return `Hi! This assistant only answers people its owner has approved.\nYour pairing code: ${code}\nAsk the owner to approve it (Homing → Platforms → ${platformTitle(platform)} → requests, or: homing pairing approve ${code}).`;
}

/**
 * The teller most platforms hold: the usual words (`pairingReply`), at most 20
 * codes per 10 minutes, each sent as a notice and marked told once it went out.
 * IRC builds its own (its courtesy budget, one line of words).
 */
export function usualPairingTeller(options: {
  readonly platform: string;
  readonly access: OwedCodes | undefined;
  readonly sendNotice: (chatId: string, text: string) => Promise<boolean>;
  readonly connected: () => boolean;
  readonly logger: Logger;
  /** A monotonic clock's ms. */
  readonly now: () => number;
}): PairingTeller {
  return new PairingTeller(
    {
      platform: options.platform,
      access: options.access,
      budget: new PairingReplyLimit().on(options.now),
      tell: (owed) => options.sendNotice(owed.chatId, pairingReply(options.platform, owed.code)),
      connected: options.connected,
      logger: options.logger,
    },
    options.now,
  );
}
