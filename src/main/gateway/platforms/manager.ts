import type { PlatformState, PlatformStatus } from '../../../shared/api';
import type { Clock } from '../clock';
import type { PlatformSender } from '../delivery/sender';
import type { EventBus } from '../events';
import type { Logger } from '../logger';
import type { AdapterEvent, InboundMessage, IntakeOutcome, PlatformAdapter } from './adapter';
import { LOCAL_PLATFORM } from './local/local-adapter';

/** Builds an adapter for a platform's current config, or says why it cannot. */
export type AdapterFactory = () => PlatformAdapter;

export interface PlatformManagerOptions {
  readonly bus: EventBus;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Every inbound message from every platform; `ack` (when the adapter asks) learns whether it was saved. */
  readonly onMessage: (message: InboundMessage, ack?: (outcome: IntakeOutcome) => void) => void;
  /** The platform can take sends now: register it with the delivery side (which sweeps for it). */
  readonly onConnected: (sender: PlatformSender) => () => void;
  /** A connected platform can reach more destinations now (a channel joined): sweep for what waited. */
  readonly onReachable?: (platform: string) => void;
}

interface Entry {
  readonly adapter: PlatformAdapter;
  /** The config it was built from, to tell whether a new config changes it. */
  readonly fingerprint: string;
  state: PlatformState;
  error: string | null;
  /** Wall-clock ms of its next reconnect try (the adapter's backoff), or null. */
  nextAttemptAt: number | null;
  /** The last time it said messages may have been lost (an `intake-gap`), kept for a window opened later. */
  notice: { readonly text: string; readonly at: number } | null;
  unregister: (() => void) | undefined;
  unsubscribe: () => void;
}

/**
 * The connected platforms. Applies a config (starting, restarting or stopping
 * adapters whose settings changed), relays their states to the bus, and makes a
 * platform deliverable exactly while it is connected.
 */
export class PlatformManager {
  private readonly entries = new Map<string, Entry>();
  /** Platforms the config asks for that could not be set up (a token not set): listed, with why, until the config changes. */
  private readonly unavailable = new Map<string, { fingerprint: string; error: string }>();
  /** While paused (the user's Pause, or the machine suspending), no network adapter connects. */
  private paused = false;

  constructor(private readonly options: PlatformManagerOptions) {}

  /** Brings the running adapters in line with `wanted` (name → fingerprint and factory). */
  async apply(wanted: ReadonlyMap<string, { fingerprint: string; create: AdapterFactory }>): Promise<void> {
    for (const [name, entry] of [...this.entries]) {
      const next = wanted.get(name);
      if (!next || next.fingerprint !== entry.fingerprint) await this.remove(name);
    }
    for (const [name, failed] of [...this.unavailable]) {
      if (wanted.get(name)?.fingerprint !== failed.fingerprint) this.unavailable.delete(name);
    }
    for (const [name, next] of wanted) {
      if (this.entries.has(name) || this.unavailable.has(name)) continue;
      let adapter: PlatformAdapter;
      try {
        adapter = next.create();
      } catch (error) {
        this.options.logger.error('a platform could not be set up', { platform: name, error });
        this.unavailable.set(name, { fingerprint: next.fingerprint, error: describe(error) });
        this.publish({ name, state: 'disconnected', error: describe(error) });
        continue;
      }
      const entry: Entry = {
        adapter,
        fingerprint: next.fingerprint,
        state: adapter.state(),
        error: null,
        nextAttemptAt: null,
        notice: null,
        unregister: undefined,
        unsubscribe: adapter.onEvent((event) => this.onEvent(name, event)),
      };
      this.entries.set(name, entry);
      if (this.paused && name !== LOCAL_PLATFORM) continue;
      this.connect(name, adapter);
    }
  }

  get(name: string): PlatformAdapter | undefined {
    return this.entries.get(name)?.adapter;
  }

  list(): PlatformStatus[] {
    return [
      ...[...this.entries].map(([name, entry]) => this.statusOf(name, entry)),
      ...[...this.unavailable].map(([name, failed]) => ({ name, state: 'disconnected' as const, error: failed.error })),
    ];
  }

  status(name: string): PlatformStatus | undefined {
    const entry = this.entries.get(name);
    if (entry) return this.statusOf(name, entry);
    const failed = this.unavailable.get(name);
    return failed ? { name, state: 'disconnected', error: failed.error } : undefined;
  }

  async reconnect(name: string): Promise<boolean> {
    const entry = this.entries.get(name);
    if (!entry) return false;
    await entry.adapter.disconnect();
    void entry.adapter.connect();
    return true;
  }

  /** After a resume from sleep: every adapter checks its connection. */
  async probeAll(): Promise<void> {
    const probed = [...this.entries].filter(([name]) => !this.paused || name === LOCAL_PLATFORM);
    await Promise.all(probed.map(([, entry]) => entry.adapter.probe().catch(() => undefined)));
  }

  get isPaused(): boolean {
    return this.paused;
  }

  /**
   * Pauses (disconnects) or resumes (connects) every platform except the app's own
   * chat, which needs no network and keeps working. Adapters are kept, so a resume
   * reconnects with the same settings; a config applied while paused waits too.
   */
  async setPaused(paused: boolean): Promise<void> {
    if (paused === this.paused) return;
    this.paused = paused;
    const network = [...this.entries].filter(([name]) => name !== LOCAL_PLATFORM);
    if (paused) {
      await Promise.all(network.map(([, entry]) => entry.adapter.disconnect().catch(() => undefined)));
    } else {
      for (const [name, entry] of network) this.connect(name, entry.adapter);
    }
  }

  /** Connects in the background; a connect that throws is reported as the platform's state. */
  private connect(name: string, adapter: PlatformAdapter): void {
    void adapter.connect().catch((error: unknown) => this.onEvent(name, { type: 'state', state: 'disconnected', error: describe(error) }));
  }

  async stopAll(): Promise<void> {
    for (const name of [...this.entries.keys()]) await this.remove(name);
  }

  private async remove(name: string): Promise<void> {
    const entry = this.entries.get(name);
    if (!entry) return;
    this.entries.delete(name);
    entry.unregister?.();
    entry.unsubscribe();
    try {
      await entry.adapter.disconnect();
    } catch (error) {
      this.options.logger.warn('a platform did not disconnect cleanly', { platform: name, error });
    }
    this.publish({ name, state: 'disconnected', error: null, nextAttemptAt: null });
  }

  private onEvent(name: string, event: AdapterEvent): void {
    const entry = this.entries.get(name);
    if (!entry) return;
    if (event.type === 'message') {
      this.options.onMessage(event.message, event.ack);
      return;
    }
    if (event.type === 'reachable') {
      if (entry.unregister) this.options.onReachable?.(name);
      return;
    }
    if (event.type === 'rooms') {
      this.publish(this.statusOf(name, entry));
      return;
    }
    if (event.type === 'intake-gap') {
      const at = this.options.clock.now();
      this.options.logger.warn(`${name}: ${event.text}`, { platform: name });
      entry.notice = { text: event.text, at };
      this.options.bus.emit({ type: 'platform.notice', platform: name, text: event.text, at });
      this.publish(this.statusOf(name, entry));
      return;
    }
    entry.state = event.state;
    entry.error = event.state === 'connected' ? null : (event.error ?? entry.error);
    entry.nextAttemptAt = event.nextAttemptAt ?? null;
    // Degraded (one channel refused) still sends where it can: canSend says where.
    if (event.state === 'connected' || event.state === 'degraded') {
      if (!entry.unregister) {
        const adapter = entry.adapter;
        entry.unregister = this.options.onConnected({
          name: adapter.platform,
          serverIdempotency: adapter.idempotentSends,
          ...(adapter.dedupWindowMs !== undefined ? { dedupWindowMs: adapter.dedupWindowMs } : {}),
          canSend: (target) => {
            const state = adapter.state();
            if (state !== 'connected' && state !== 'degraded') return false;
            return adapter.canSend ? adapter.canSend(target) : state === 'connected';
          },
          send: (text, target) => adapter.send(text, target),
        });
      }
    } else {
      entry.unregister?.();
      entry.unregister = undefined;
    }
    this.publish(this.statusOf(name, entry));
  }

  private statusOf(name: string, entry: Entry): PlatformStatus {
    const rooms = entry.adapter.listRooms?.();
    return {
      name,
      state: entry.state,
      error: entry.error,
      nextAttemptAt: entry.nextAttemptAt,
      ...(rooms ? { rooms } : {}),
      ...(entry.notice ? { notice: entry.notice } : {}),
    };
  }

  private publish(platform: PlatformStatus): void {
    this.options.bus.emit({ type: 'platform.state', platform, at: this.options.clock.now() });
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
