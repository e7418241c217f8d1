/**
 * Sleep, wake, network and shutdown, adapted into gateway calls. On `suspend`
 * the chat platforms are paused (their sockets would die in sleep anyway); on
 * `resume` they reconnect and the ledger is swept; when the network comes back
 * (polled, since Electron has no event for it) the ledger is swept; on shutdown
 * the app stops gracefully. Electron's powerMonitor and net are injected.
 */

/** The part of Electron's powerMonitor the shell uses. */
export interface PowerSurface {
  on(event: 'suspend' | 'resume' | 'shutdown', listener: () => void): void;
}

/** The part of Electron's `net` the shell uses. */
export interface NetSurface {
  isOnline(): boolean;
}

/** What the gateway is asked to do. */
export interface PowerActions {
  /** Disconnect the chat platforms for the sleep (not the user's own Pause). */
  suspend(): void;
  /** Reconnect them, probe the connections and sweep. */
  resume(sleptMs: number): void;
  /** Sweep the ledger now. */
  sweep(reason: 'network'): void;
  /** The OS is shutting down: stop the gateway gracefully. */
  shutdown(): void;
}

export interface PowerTimers {
  setInterval(callback: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
  now(): number;
}

export interface PowerWatcherOptions {
  readonly power: PowerSurface;
  readonly net: NetSurface;
  readonly actions: PowerActions;
  readonly timers?: PowerTimers;
  /** How often `net.isOnline()` is polled. */
  readonly pollMs?: number;
}

const realTimers: PowerTimers = {
  setInterval: (callback, ms) => setInterval(callback, ms).unref(),
  clearInterval: (handle) => clearInterval(handle as ReturnType<typeof setInterval>),
  now: () => Date.now(),
};

export class PowerWatcher {
  private suspendedAt: number | undefined;
  private online: boolean;
  private poll: unknown;
  private readonly timers: PowerTimers;

  constructor(private readonly options: PowerWatcherOptions) {
    this.timers = options.timers ?? realTimers;
    this.online = options.net.isOnline();
  }

  start(): void {
    const { power, actions } = this.options;
    power.on('suspend', () => {
      if (this.suspendedAt !== undefined) return;
      this.suspendedAt = this.timers.now();
      actions.suspend();
    });
    power.on('resume', () => {
      const sleptMs = this.suspendedAt === undefined ? 0 : Math.max(0, this.timers.now() - this.suspendedAt);
      this.suspendedAt = undefined;
      actions.resume(sleptMs);
    });
    power.on('shutdown', () => actions.shutdown());
    this.poll = this.timers.setInterval(() => this.checkNetwork(), this.options.pollMs ?? 5_000);
  }

  stop(): void {
    if (this.poll !== undefined) this.timers.clearInterval(this.poll);
    this.poll = undefined;
  }

  private checkNetwork(): void {
    const online = this.options.net.isOnline();
    const cameBack = online && !this.online;
    this.online = online;
    // While asleep the resume sweeps; a flapping network during sleep adds nothing.
    if (cameBack && this.suspendedAt === undefined) this.options.actions.sweep('network');
  }
}
