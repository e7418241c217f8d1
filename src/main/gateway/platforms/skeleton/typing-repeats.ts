/**
 * "typing…" kept up until the reply is ready: a platform shows it only for
 * seconds (Telegram about 5, Discord about 10), so it is said again and
 * again. The adapter's disconnect stops every repeat still going.
 */
export class TypingRepeats {
  private readonly timers = new Set<ReturnType<typeof setInterval>>();

  /**
   * Calls `tick` now and every `intervalMs` until the returned function is
   * called; that calls `stopped` (Matrix says "no longer typing") unless the
   * repeat had already ended by a disconnect.
   */
  start(tick: () => void, intervalMs: number, stopped?: () => void): () => void {
    tick();
    const timer = setInterval(tick, intervalMs);
    // A forgotten stop must not keep the process alive.
    timer.unref?.();
    this.timers.add(timer);
    return () => {
      clearInterval(timer);
      if (this.timers.delete(timer)) stopped?.();
    };
  }

  stopAll(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers.clear();
  }
}
