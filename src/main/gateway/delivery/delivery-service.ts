import type { LedgerHealth, SweepReport } from '../../../shared/api';
import type { Clock } from '../clock';
import type { Db } from '../db/database';
import type { EventBus } from '../events';
import { Ledger, type LedgerPolicy, type ProcessProbe } from '../ledger';
import type { Logger } from '../logger';
import { Deliverer, type DeliveryOutcome, type NewReply, type RecordedReply } from './deliverer';
import type { PlatformSender } from './sender';

export interface DeliveryServiceOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly bus: EventBus;
  readonly policy?: Partial<LedgerPolicy>;
  readonly probe?: ProcessProbe;
  /** How often the lease is renewed (default a third of the lease). */
  readonly heartbeatMs?: number;
  /** How often the sweep runs while the gateway runs: retries failed rows, picks up dead owners' rows. */
  readonly sweepEveryMs?: number;
  /**
   * Runs a claimed row's delivery in its conversation's order (the pipeline's
   * queue), so a resent reply never overtakes or interleaves with a newer one.
   * Without it, claimed rows are sent at once.
   */
  readonly inOrder?: (sessionKey: string, task: () => Promise<unknown>) => void;
}

const EMPTY_REPORT: SweepReport = { claimed: 0, abandoned: 0, pruned: 0, waitingForPlatform: 0, owed: 0 };

/**
 * The gateway's delivery side: one ledger instance for this process, the send
 * loop, the connected platforms, and the timers (heartbeat, periodic sweep).
 * Platforms are registered by their adapters (issue 5) through
 * `registerPlatform`; until then none is deliverable and sweeps claim nothing.
 */
export class DeliveryService {
  readonly ledger: Ledger;
  readonly deliverer: Deliverer;
  private readonly platforms = new Map<string, PlatformSender>();
  private readonly timers: NodeJS.Timeout[] = [];
  private stopped = false;
  private last: { at: number; report: SweepReport } | null = null;

  private constructor(private readonly options: DeliveryServiceOptions) {
    const { bus, clock } = options;
    this.ledger = new Ledger({
      db: options.db,
      clock,
      ...(options.probe ? { probe: options.probe } : {}),
      ...(options.policy ? { policy: options.policy } : {}),
      onChange: (delivery) => bus.emit({ type: 'delivery.changed', delivery, at: clock.now() }),
    });
    this.deliverer = new Deliverer({
      ledger: this.ledger,
      clock,
      logger: options.logger,
      onLedgerFailure: (health) => bus.emit({ type: 'ledger.health', health, at: clock.now() }),
    });
  }

  /** Registers this process's instance, starts the timers (unref'd) and runs the start-up sweep. */
  static start(options: DeliveryServiceOptions): DeliveryService {
    const service = new DeliveryService(options);
    service.ledger.register();
    service.startTimers();
    service.sweep();
    return service;
  }

  /**
   * A config reload's delivery rules, in force from the next sweep; a changed
   * lease also re-times the heartbeat and the sweep (a third of the lease each).
   */
  setPolicy(policy: Partial<LedgerPolicy>): void {
    if (this.stopped) return;
    const leaseMs = this.ledger.policy.leaseMs;
    this.ledger.setPolicy(policy);
    if (this.ledger.policy.leaseMs !== leaseMs) this.startTimers();
  }

  private startTimers(): void {
    for (const timer of this.timers.splice(0)) clearInterval(timer);
    const { options } = this;
    const heartbeatMs = options.heartbeatMs ?? Math.max(1000, Math.floor(this.ledger.policy.leaseMs / 3));
    // A third of the lease: a dead owner's rows are claimed soon after its lease runs out.
    const sweepEveryMs = options.sweepEveryMs ?? Math.max(1000, Math.floor(this.ledger.policy.leaseMs / 3));
    this.every(heartbeatMs, () => this.ledger.heartbeat(), 'heartbeat');
    this.every(sweepEveryMs, () => this.sweep(), 'sweep');
  }

  /**
   * An adapter connected: its platform becomes deliverable, and a sweep sends
   * what was waiting for it. Returns the function that unregisters it.
   */
  registerPlatform(sender: PlatformSender): () => void {
    this.platforms.set(sender.name, sender);
    this.sweep();
    return () => {
      if (this.platforms.get(sender.name) === sender) this.platforms.delete(sender.name);
    };
  }

  /**
   * The pipeline's entry: records the reply and sends it. With its platform not
   * connected the reply is recorded and left owed for the sweep. Never throws.
   */
  async deliverReply(platform: string, reply: NewReply): Promise<DeliveryOutcome | { status: 'waiting'; id: string | null }> {
    return this.sendRecorded(platform, this.deliverer.recordReply(platform, reply));
  }

  /** Sends a reply the caller recorded with `deliverer.recordReply`, or leaves it owed while its platform is not connected. */
  async sendRecorded(platform: string, recorded: RecordedReply): Promise<DeliveryOutcome | { status: 'waiting'; id: string | null }> {
    const sender = this.platforms.get(platform);
    if (sender) return this.deliverer.sendRecorded(recorded, sender);
    return { status: 'waiting', id: recorded.result ? recorded.id : null };
  }

  /**
   * Sweeps now and starts sending what it claimed; the report is what the sweep
   * found, or undefined when the ledger failed (see ledgerHealth).
   */
  sweepNow(): SweepReport | undefined {
    return this.sweep();
  }

  ledgerHealth(): LedgerHealth {
    return this.deliverer.ledgerHealth();
  }

  /** The last sweep's report and time, or null before the first one. */
  lastSweep(): { at: number; report: SweepReport } | null {
    return this.last;
  }

  /** Stops the timers and marks the instance stopped, so its rows are recoverable at once. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const timer of this.timers) clearInterval(timer);
    this.deliverer.guard('stop', '-', () => this.ledger.stop());
  }

  private sweep(): SweepReport | undefined {
    if (this.stopped) return EMPTY_REPORT;
    const deliverablePlatforms = [...this.platforms.values()].map((sender) => ({
      name: sender.name,
      serverIdempotency: sender.serverIdempotency,
    }));
    const outcome = this.deliverer.guard('sweepRecoverable', '-', () =>
      this.ledger.sweepRecoverable({ now: this.options.clock.now(), deliverablePlatforms }),
    );
    if (!outcome) return undefined;
    for (const claim of outcome.claimed) {
      const sender = this.platforms.get(claim.target.platform);
      // Claimed only for registered platforms; one unregistered since is retried later.
      if (!sender) continue;
      const deliver = () => this.deliverer.deliverClaimed(claim, sender);
      if (this.options.inOrder) this.options.inOrder(claim.sessionKey, deliver);
      else void deliver();
    }
    this.last = { at: this.options.clock.now(), report: outcome.report };
    this.options.bus.emit({ type: 'sweep.completed', report: outcome.report, at: this.last.at });
    return outcome.report;
  }

  private every(ms: number, task: () => void, name: string): void {
    const timer = setInterval(() => {
      try {
        task();
      } catch (error) {
        this.options.logger.error(`delivery ${name} failed`, { error });
      }
    }, ms);
    timer.unref();
    this.timers.push(timer);
  }
}
