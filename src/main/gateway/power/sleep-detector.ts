import { readFileSync } from 'node:fs';
import type { Clock } from '../clock';

export interface SleepDetectorOptions {
  readonly clock: Clock;
  /** How often to compare the clocks (default 1 s: a stall is measured to within it). */
  readonly intervalMs?: number;
  /** A suspension longer than this counts as a sleep (the platforms are probed, the ledger swept). */
  readonly thresholdMs?: number;
  /** A tick this much later than scheduled, with no suspension, is a stall of the event loop. */
  readonly stallThresholdMs?: number;
  /**
   * Milliseconds on a clock that keeps counting while the machine is suspended
   * (Linux's CLOCK_BOOTTIME), or undefined where there is none; default
   * `bootClock`. Its difference from the monotonic clock is time suspended.
   */
  readonly boottime?: () => number | undefined;
  readonly onResume: (sleptMs: number) => void;
  /** The event loop was blocked (the machine was awake): how long past the tick. */
  readonly onStall?: (stalledMs: number) => void;
  /**
   * The wall clock was set (NTP, by hand): by how much, ahead (positive) or
   * back, beyond what the machine slept. Where no boot clock tells a sleep
   * from a clock set forward, only a clock set back is seen here.
   */
  readonly onClockChange?: (jumpMs: number) => void;
}

/**
 * Tells a sleep from a stall, without any OS hook (headless mode has no
 * powerMonitor).
 *
 * **Measured on Linux**: CLOCK_BOOTTIME (`/proc/uptime`) counts time suspended,
 * CLOCK_MONOTONIC (`clock.monotonic`) does not, so between two ticks their
 * difference is the time the machine slept — and a tick that came late with no
 * such difference is a stall of the event loop (a long synchronous task, the
 * process stopped by a debugger or SIGSTOP): logged as a stall, and awake time.
 * **Elsewhere** the wall clock stands in for the boot clock (it keeps running
 * during a sleep; macOS's monotonic clock stops), so a clock set forward can
 * look like a sleep: a false positive costs one extra sweep.
 *
 * `suspendedMs()` is the running total of time suspended since start, measured
 * when it is called: the ledger's awake clock leaves it out (delivery-service).
 */
export class SleepDetector {
  private timer: ReturnType<typeof setInterval> | undefined;
  private lastWall = 0;
  private lastMonotonic = 0;
  private lastBoot: number | undefined;
  /** The monotonic clock at the last tick (or start): how late a tick is. */
  private lastTick = 0;
  private suspendedTotal = 0;
  /** Suspension measured (by suspendedMs) since the last tick, not yet judged there. */
  private suspendedSinceTick = 0;
  /** How far the wall clock was set since the last tick, beyond the time that passed (see onClockChange). */
  private clockSetSinceTick = 0;
  private readonly boottime: () => number | undefined;

  constructor(private readonly options: SleepDetectorOptions) {
    this.boottime = options.boottime ?? bootClock;
    // Measured from here even when the timer never starts (the tray app hears sleeps from Electron).
    this.mark();
  }

  start(): void {
    if (this.timer) return;
    this.mark();
    this.timer = setInterval(() => this.check(), this.options.intervalMs ?? DEFAULT_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Time suspended since start, measured now (0 where it cannot be measured). */
  suspendedMs(): number {
    this.suspendedSinceTick += this.measure();
    return this.suspendedTotal;
  }

  /** Compares the clocks now; called by the timer, and directly by tests. */
  check(): void {
    const slept = this.measure() + this.suspendedSinceTick;
    this.suspendedSinceTick = 0;
    const tick = this.options.clock.monotonic();
    const late = tick - this.lastTick - (this.options.intervalMs ?? DEFAULT_INTERVAL_MS);
    this.lastTick = tick;
    const clockSet = this.clockSetSinceTick;
    this.clockSetSinceTick = 0;
    if (Math.abs(clockSet) > CLOCK_SET_MS) this.options.onClockChange?.(Math.round(clockSet));
    if (slept > (this.options.thresholdMs ?? 30_000)) {
      this.options.onResume(Math.round(slept));
      return;
    }
    // Monotonic time runs on through a stall (not through a suspension): a late tick with no sleep is a stall.
    if (late > (this.options.stallThresholdMs ?? 2_000)) this.options.onStall?.(Math.round(late));
  }

  /** Reads the clocks: the time suspended since the last reading, added to the total. */
  private measure(): number {
    const wall = this.options.clock.now();
    const monotonic = this.options.clock.monotonic();
    const boot = this.boottime();
    const monotonicDelta = monotonic - this.lastMonotonic;
    const aheadOfMonotonic = boot !== undefined && this.lastBoot !== undefined ? boot - this.lastBoot : wall - this.lastWall;
    // The boot clock's 10 ms steps and ordinary wall-clock jitter are not sleep.
    const suspended = Math.max(0, aheadOfMonotonic - monotonicDelta);
    const counted = suspended > JITTER_MS ? suspended : 0;
    // The wall clock moved by more than the time that passed, asleep or awake: someone set it.
    if (boot !== undefined && this.lastBoot !== undefined) this.clockSetSinceTick += wall - this.lastWall - (boot - this.lastBoot);
    else this.clockSetSinceTick += Math.min(0, wall - this.lastWall - monotonicDelta);
    this.lastWall = wall;
    this.lastMonotonic = monotonic;
    this.lastBoot = boot;
    this.suspendedTotal += counted;
    return counted;
  }

  private mark(): void {
    this.lastWall = this.options.clock.now();
    this.lastMonotonic = this.options.clock.monotonic();
    this.lastTick = this.lastMonotonic;
    this.lastBoot = this.boottime();
  }
}

const DEFAULT_INTERVAL_MS = 1_000;
/** A wall clock set by less than this is drift being corrected, not a change worth acting on. */
const CLOCK_SET_MS = 5_000;

/** Differences below this are clock noise (the boot clock's 10 ms steps, wall-clock slewing), not sleep. */
const JITTER_MS = 1_000;

/**
 * CLOCK_BOOTTIME in milliseconds on Linux, read from `/proc/uptime` (seconds
 * since boot, suspended time included, in 10 ms steps); undefined elsewhere or
 * when it cannot be read.
 */
export function bootClock(): number | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    const seconds = Number(readFileSync('/proc/uptime', 'latin1').split(' ')[0]);
    return Number.isFinite(seconds) ? seconds * 1000 : undefined;
  } catch {
    return undefined;
  }
}
