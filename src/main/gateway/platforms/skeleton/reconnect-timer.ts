/**
 * The wait before the next connection attempt, for an adapter whose library
 * calls back on events (IRC, XMPP, Discord) instead of running a loop: at
 * most one attempt waits at a time, and probe() can run it early.
 */
export class ReconnectTimer {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private attempt: (() => void) | undefined;

  /** Whether an attempt is waiting. */
  get waiting(): boolean {
    return this.timer !== undefined;
  }

  /** Runs `attempt` after `delayMs`, in place of any attempt already waiting. */
  schedule(delayMs: number, attempt: () => void): void {
    this.cancel();
    this.attempt = attempt;
    this.timer = setTimeout(() => this.fire(), delayMs);
  }

  cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.attempt = undefined;
  }

  /** After a sleep the network may be back: runs the waiting attempt now. False when none was waiting. */
  hurry(): boolean {
    if (!this.waiting) return false;
    clearTimeout(this.timer);
    this.fire();
    return true;
  }

  private fire(): void {
    const attempt = this.attempt;
    this.timer = undefined;
    this.attempt = undefined;
    attempt?.();
  }
}
