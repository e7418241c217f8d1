import type { Logger } from '../logger';
import type { OwedCode } from './pairing-store';

/** How many pairing codes a platform may send, and when it may send the next. */
export interface ReplyBudget {
  /** Spends one reply if the budget allows one now. */
  take(): boolean;
  /** Milliseconds until `take` can succeed again (0 when it can now). */
  waitMs(): number;
}

/** The pairing store as one platform's adapter sees it (the adapter's `access` option). */
export interface OwedCodes {
  owedPairing(): readonly OwedCode[];
  pairingTold(senderId: string, code: string): void;
}

export interface PairingTellerOptions {
  readonly platform: string;
  /** Undefined when the platform has no pairing: the teller then does nothing. */
  readonly access: OwedCodes | undefined;
  readonly budget: ReplyBudget;
  /** Sends the code to its sender; true once it went out (false: not connected, or the platform refused). */
  readonly tell: (owed: OwedCode) => Promise<boolean>;
  /** Whether the adapter is connected, so a code could go out now. */
  readonly connected: () => boolean;
  readonly logger: Logger;
  /** After a failed send: how long that sender is passed over, and when the teller tries again (default 30 s). */
  readonly retryMs?: number;
}

const DEFAULT_RETRY_MS = 30_000;
/** While codes are owed and the adapter is not connected, it is looked at this often… */
const CONNECTED_CHECK_MS = 5_000;
/**
 * …for at most this long. The teller has no word from the adapter's lifecycle,
 * so this is what ends the checks of an adapter that was stopped for good (a
 * config change replaced it); the next stranger's message starts them again.
 */
const CONNECTED_CHECKS_FOR_MS = 60 * 60 * 1000;

/**
 * Tells the pairing codes a platform owes, as fast as its reply budget allows,
 * and marks a sender told only once their code went out. What the budget
 * refuses now waits for its next free slot (a timer), not for the sender to
 * write again.
 *
 * The order alternates between the oldest and the newest owed code. Oldest
 * only would let a burst of strangers starve whoever writes after it for
 * (burst / budget) windows; newest only would let a flood that goes on starve
 * everyone before it. Alternating gives each end half of every window: a person
 * who wrote before a flood is told while it lasts, and one who writes after a
 * burst is told in the budget's next window.
 *
 * Owed codes from before a restart are in the pairing store: the teller starts
 * looking for them as the adapter is built, and tells them once it connects.
 */
export class PairingTeller {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private draining = false;
  private again = false;
  private newestNext = false;
  /** Whether the budget's refusal was logged since the owed list was last empty (one line per flood, not per stranger). */
  private warned = false;
  /** Since when the adapter has been seen not connected (monotonic ms); undefined while it is. */
  private downSince: number | undefined;
  /** Senders whose send just failed, until when they are passed over (monotonic ms), so one refusing chat cannot block the rest. */
  private readonly failed = new Map<string, number>();
  private readonly retryMs: number;

  constructor(
    private readonly options: PairingTellerOptions,
    private readonly now: () => number,
  ) {
    this.retryMs = options.retryMs ?? DEFAULT_RETRY_MS;
    // Not at once: the adapter building this is not finished yet.
    if (options.access) this.schedule(0);
  }

  /** Something may be owed now (a stranger wrote): tell what the budget allows. */
  kick(): void {
    if (!this.options.access) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = true;
    this.clearTimer();
    void this.drain().finally(() => {
      this.draining = false;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  private async drain(): Promise<void> {
    const access = this.options.access!;
    for (;;) {
      const now = this.now();
      for (const [sender, until] of this.failed) if (until <= now) this.failed.delete(sender);
      const owed = access.owedPairing().filter((entry) => !this.failed.has(entry.senderId));
      if (owed.length === 0) {
        this.warned = false;
        if (this.failed.size > 0) this.schedule(Math.min(...this.failed.values()) - now);
        return;
      }
      if (!this.options.connected()) {
        this.downSince ??= now;
        if (now - this.downSince < CONNECTED_CHECKS_FOR_MS) this.schedule(CONNECTED_CHECK_MS);
        return;
      }
      this.downSince = undefined;
      if (!this.options.budget.take()) {
        if (!this.warned) this.options.logger.warn(`${this.options.platform}: many strangers are asking to pair; their codes go out as the reply budget allows`, { owed: owed.length });
        this.warned = true;
        this.schedule(this.options.budget.waitMs());
        return;
      }
      const next = this.newestNext ? owed[owed.length - 1]! : owed[0]!;
      this.newestNext = !this.newestNext;
      let sent = false;
      try {
        sent = await this.options.tell(next);
      } catch (error) {
        this.options.logger.warn(`${this.options.platform}: a pairing code could not be sent`, { error });
      }
      if (sent) access.pairingTold(next.senderId, next.code);
      else this.failed.set(next.senderId, this.now() + this.retryMs);
    }
  }

  private schedule(delayMs: number): void {
    this.clearTimer();
    const timer = setTimeout(
      () => {
        this.timer = undefined;
        this.kick();
      },
      Math.max(1, delayMs),
    );
    // Owed codes must not keep a stopping process alive.
    timer.unref?.();
    this.timer = timer;
  }

  private clearTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
