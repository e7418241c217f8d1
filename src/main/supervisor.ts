/**
 * Keeps the gateway process alive: starts it, restarts it after a crash with
 * exponential backoff, and gives up (state `failed`) after too many crashes in a
 * short time, so a crash loop is visible instead of burning the CPU. The "start a
 * process" function is a parameter: Electron's utilityProcess in the app, a
 * child_process in tests.
 */

export interface SupervisedProcess {
  readonly pid: number | undefined;
  /** Called once when the process ends, whatever the reason. */
  onExit(listener: (code: number | null, signal: string | null) => void): void;
  kill(): void;
}

export interface ExitRecord {
  readonly code: number | null;
  readonly signal: string | null;
  /** Set when the process could not be started at all. */
  readonly error?: string;
  readonly at: number;
}

export type SupervisorState = 'idle' | 'starting' | 'running' | 'restarting' | 'stopping' | 'stopped' | 'failed';

export interface SupervisorStatus {
  readonly state: SupervisorState;
  readonly pid: number | undefined;
  /** Crashes since the supervisor started. */
  readonly crashes: number;
  readonly lastExit: ExitRecord | undefined;
  /** When `restarting`: the delay before the next start. */
  readonly restartInMs: number | undefined;
}

export interface SupervisorTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  now(): number;
}

export interface SupervisorOptions {
  readonly start: () => SupervisedProcess;
  readonly onStatus?: (status: SupervisorStatus) => void;
  /** First restart delay; doubles per consecutive crash up to `maxBackoffMs`. */
  readonly initialBackoffMs?: number;
  readonly maxBackoffMs?: number;
  /** Give up after this many crashes within `crashWindowMs`. */
  readonly maxCrashes?: number;
  readonly crashWindowMs?: number;
  /** A process that ran this long without crashing resets the backoff. */
  readonly stableAfterMs?: number;
  readonly timers?: SupervisorTimers;
}

/**
 * Why a stop was not clean, or undefined when it was: the process exited 0 by
 * itself (the gateway finished or handed over its work), or none was running.
 */
export function uncleanStop(exit: ExitRecord | undefined): string | undefined {
  if (exit === undefined || (exit.code === 0 && exit.signal === null)) return undefined;
  return exit.signal !== null ? `the gateway process was killed (${exit.signal})` : `the gateway process exited with code ${exit.code}`;
}

const realTimers: SupervisorTimers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  now: () => Date.now(),
};

export class Supervisor {
  private state: SupervisorState = 'idle';
  private child: SupervisedProcess | undefined;
  private childStartedAt = 0;
  private crashTimes: number[] = [];
  private consecutive = 0;
  private totalCrashes = 0;
  private lastExit: SupervisorStatus['lastExit'];
  private restartTimer: unknown;
  private restartInMs: number | undefined;
  private readonly timers: SupervisorTimers;
  private stopWaiters: ((exit: ExitRecord) => void)[] = [];

  constructor(private readonly options: SupervisorOptions) {
    this.timers = options.timers ?? realTimers;
  }

  status(): SupervisorStatus {
    return {
      state: this.state,
      pid: this.child?.pid,
      crashes: this.totalCrashes,
      lastExit: this.lastExit,
      restartInMs: this.restartInMs,
    };
  }

  /** Starts the process (also after `failed` or `stopped`: a manual restart). */
  start(): void {
    if (this.state === 'starting' || this.state === 'running' || this.state === 'restarting') return;
    this.crashTimes = [];
    this.consecutive = 0;
    this.spawn();
  }

  /**
   * Stops the process and does not restart it. Resolves once it has exited,
   * with how it exited (undefined when none was running): a clean stop exits 0.
   */
  stop(): Promise<ExitRecord | undefined> {
    this.cancelRestart();
    if (!this.child) {
      this.setState('stopped');
      return Promise.resolve(undefined);
    }
    this.setState('stopping');
    const done = new Promise<ExitRecord>((resolve) => this.stopWaiters.push(resolve));
    this.child.kill();
    return done;
  }

  private spawn(): void {
    this.restartInMs = undefined;
    this.setState('starting');
    let child: SupervisedProcess;
    try {
      child = this.options.start();
    } catch (error) {
      this.child = undefined;
      this.onCrash(null, null, error instanceof Error ? error.message : String(error));
      return;
    }
    this.child = child;
    this.childStartedAt = this.timers.now();
    child.onExit((code, signal) => {
      if (this.child !== child) return;
      this.child = undefined;
      if (this.state === 'stopping') {
        const exit = { code, signal, at: this.timers.now() };
        this.lastExit = exit;
        this.setState('stopped');
        for (const resolve of this.stopWaiters.splice(0)) resolve(exit);
        return;
      }
      this.onCrash(code, signal);
    });
    this.setState('running');
  }

  private onCrash(code: number | null, signal: string | null, error?: string): void {
    const now = this.timers.now();
    this.lastExit = error === undefined ? { code, signal, at: now } : { code, signal, error, at: now };
    this.totalCrashes++;
    const stable = this.options.stableAfterMs ?? 60_000;
    if (this.childStartedAt > 0 && now - this.childStartedAt >= stable) this.consecutive = 0;
    this.consecutive++;
    const window = this.options.crashWindowMs ?? 60_000;
    this.crashTimes = [...this.crashTimes.filter((at) => now - at < window), now];
    if (this.crashTimes.length >= (this.options.maxCrashes ?? 5)) {
      this.setState('failed');
      return;
    }
    const initial = this.options.initialBackoffMs ?? 500;
    const max = this.options.maxBackoffMs ?? 30_000;
    this.restartInMs = Math.min(max, initial * 2 ** (this.consecutive - 1));
    this.setState('restarting');
    this.restartTimer = this.timers.setTimeout(() => {
      this.restartTimer = undefined;
      if (this.state === 'restarting') this.spawn();
    }, this.restartInMs);
  }

  private cancelRestart(): void {
    if (this.restartTimer !== undefined) this.timers.clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    this.restartInMs = undefined;
  }

  private setState(state: SupervisorState): void {
    this.state = state;
    this.options.onStatus?.(this.status());
  }
}
