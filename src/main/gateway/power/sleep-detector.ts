import type { Clock } from '../clock';

export interface SleepDetectorOptions {
  readonly clock: Clock;
  /** How often to compare the clocks. */
  readonly intervalMs?: number;
  /** A gap this much larger than expected counts as a sleep (or a frozen process). */
  readonly thresholdMs?: number;
  readonly onResume: (sleptMs: number) => void;
}

/**
 * Detects a resume from sleep without any OS hook (headless mode has no
 * powerMonitor). While a machine sleeps the wall clock keeps running but the
 * monotonic clock does not, so after a resume the wall clock has jumped ahead of
 * the monotonic one. A timer that fires far later than scheduled (a stopped
 * process, a suspended VM) counts too. A false positive costs one extra sweep.
 */
export class SleepDetector {
  private timer: ReturnType<typeof setInterval> | undefined;
  private lastWall = 0;
  private lastMonotonic = 0;

  constructor(private readonly options: SleepDetectorOptions) {}

  start(): void {
    if (this.timer) return;
    this.lastWall = this.options.clock.now();
    this.lastMonotonic = this.options.clock.monotonic();
    this.timer = setInterval(() => this.check(), this.options.intervalMs ?? 5_000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Compares the clocks now; called by the timer, and directly by tests. */
  check(): void {
    const wall = this.options.clock.now();
    const monotonic = this.options.clock.monotonic();
    const wallDelta = wall - this.lastWall;
    const monotonicDelta = monotonic - this.lastMonotonic;
    this.lastWall = wall;
    this.lastMonotonic = monotonic;
    const interval = this.options.intervalMs ?? 5_000;
    const threshold = this.options.thresholdMs ?? 30_000;
    const slept = Math.max(wallDelta - monotonicDelta, monotonicDelta - interval);
    if (slept > threshold) this.options.onResume(Math.round(slept));
  }
}
