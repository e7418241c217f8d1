import { dirname, join } from 'node:path';
import type { LedgerHealth, SweepReport } from '../../../shared/api';
import type { Clock } from '../clock';
import { CommitGroup } from '../db/commit-group';
import type { Db } from '../db/database';
import type { EventBus } from '../events';
import { Ledger, type ClaimedObligation, type DeliverablePlatform, type LedgerPolicy, type ProcessProbe } from '../ledger';
import type { Logger } from '../logger';
import type { MessageLimits } from '../platforms/adapter';
import { Deliverer, type DeliveryOutcome, type NewReply, type RecordedReply, type SplitReply } from './deliverer';
import { FALLBACK_LIMITS, splitReply } from './reply-parts';
import { UNRECORDED_FILE, UnrecordedJournal } from './unrecorded-journal';
import { tracksArrival, type PlatformSender } from './sender';

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
   * This process holds the data directory's lock: no other gateway runs on this
   * ledger, so rows of instances that did not stop cleanly are taken over at once.
   */
  readonly exclusive?: boolean;
  /** The gateway's group commit, shared with the session store (default: one of its own on `db`). */
  readonly group?: CommitGroup;
  /**
   * Time the machine has been suspended since some fixed moment, measured when
   * called (power/sleep-detector.ts): the ledger's awake clock leaves out what
   * passed between two sweeps while the machine slept. Default: none measured.
   */
  readonly suspendedMs?: () => number;
  /**
   * A platform's message limits, known whether it is connected or not (its
   * adapter's): a reply is split to them when it is recorded, and resumes with
   * the same parts whenever it is sent. Default, or for a platform it does not
   * know: FALLBACK_LIMITS.
   */
  readonly limitsOf?: (platform: string) => MessageLimits | undefined;
}

/** A conversation's outbox being drained now. */
interface Lane {
  /** Rows a sweep claimed for it, sent before it asks the ledger for more. */
  readonly claimed: ClaimedObligation[];
  /** Whether the ledger may hold more of the conversation to send once `claimed` is sent (see drain). */
  lookAgain: boolean;
  done: Promise<LaneEnd>;
}

/** Why a drain stopped: nothing more can go now, or the ledger failed. */
type LaneEnd = 'idle' | 'ledger-failed' | 'stopped';

export type SendOutcome = DeliveryOutcome | { readonly status: 'waiting'; readonly id: string | null };

const EMPTY_REPORT: SweepReport = { claimed: 0, abandoned: 0, pruned: 0, waitingForPlatform: 0, owed: 0 };
const LEDGER_RETRY_MS = 1_000;

/**
 * The gateway's delivery side: one ledger instance for this process, the
 * connected platforms, the per-conversation outboxes and the timers.
 *
 * Every reply — fresh from a turn, recovered after a crash, retried after a
 * failure — goes out through its conversation's one drain, in the order it was
 * recorded: a reply is sent only once every earlier reply of its conversation
 * is settled, and a reply waiting for a retry holds the head of the line
 * (the ledger enforces it; the drain follows it). Conversations drain in
 * parallel.
 */
export class DeliveryService {
  readonly ledger: Ledger;
  readonly deliverer: Deliverer;
  readonly group: CommitGroup;
  private readonly platforms = new Map<string, PlatformSender>();
  private readonly lanes = new Map<string, Lane>();
  private readonly laneTimers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly timers: NodeJS.Timeout[] = [];
  private stopping = false;
  private stopped = false;
  private last: { at: number; report: SweepReport } | null = null;
  /** `suspendedMs()` at the last sweep that credited the awake clock. */
  private suspendedAtSweep = 0;

  private constructor(private readonly options: DeliveryServiceOptions) {
    const { bus, clock } = options;
    this.group = options.group ?? new CommitGroup(options.db);
    this.ledger = new Ledger({
      db: options.db,
      clock,
      ...(options.probe ? { probe: options.probe } : {}),
      ...(options.policy ? { policy: options.policy } : {}),
      onChange: (delivery) => bus.emit({ type: 'delivery.changed', delivery, at: clock.now() }),
      listening: () => bus.listening,
    });
    this.deliverer = new Deliverer({
      ledger: this.ledger,
      clock,
      logger: options.logger,
      onLedgerFailure: (health) => bus.emit({ type: 'ledger.health', health, at: clock.now() }),
      group: this.group,
      ...(options.db.memory ? {} : { journal: new UnrecordedJournal(join(dirname(options.db.name), UNRECORDED_FILE), options.logger) }),
    });
  }

  /** Registers this process's instance, starts the timers (unref'd) and runs the start-up sweep. */
  static start(options: DeliveryServiceOptions): DeliveryService {
    const service = new DeliveryService(options);
    // A ledger that cannot even register (read-only, full) still lets replies go out, best effort.
    service.deliverer.guard('register', '-', () => service.ledger.register({ exclusive: options.exclusive ?? false }));
    service.startTimers();
    service.sweep();
    return service;
  }

  /**
   * A config reload's delivery rules, in force from the next sweep; a changed
   * lease also re-times the heartbeat and the sweep (a third of the lease each).
   */
  setPolicy(policy: Partial<LedgerPolicy>): void {
    if (this.stopping) return;
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
   * Records a reply durably, last in its conversation's outbox, in the next
   * group commit — claimed in that same commit when it can go at once (see
   * Deliverer.recordClaimed). Resolves at the commit; sendRecorded waits for
   * the disk before it sends. Hand the result to sendRecorded with no await in
   * between.
   */
  record(platform: string, reply: NewReply): Promise<RecordedReply> {
    const sender = this.platforms.get(platform);
    const split: SplitReply = { ...reply, chunks: reply.chunks ?? splitReply(reply.content, this.options.limitsOf?.(platform) ?? FALLBACK_LIMITS) };
    return this.deliverer.recordClaimed(platform, split, sender && !this.stopping ? deliverableOf(sender) : undefined);
  }

  /** Records a reply and sends it in its conversation's order. Never throws. */
  async deliverReply(platform: string, reply: NewReply): Promise<SendOutcome> {
    return this.sendRecorded(await this.record(platform, reply));
  }

  /**
   * Sends what the reply's conversation owes, this reply among them, in order;
   * resolves once nothing more of it can go now. A reply the ledger could not
   * record at all is sent anyway, unrecorded (best effort, see
   * Deliverer.sendUnrecorded); a recorded one whose claim or mark the ledger
   * cannot write waits for it ('waiting': its drain tries again).
   */
  async sendRecorded(committed: RecordedReply): Promise<SendOutcome> {
    // Nothing of a reply goes out before its record is on the disk.
    const recorded = await this.deliverer.onDisk(committed);
    if (recorded === 'not-on-disk') {
      // Committed, not known on the disk: its drain sends it once the log is healed.
      this.retryLaneIn(committed.reply.sessionKey, LEDGER_RETRY_MS);
      return { status: 'waiting', id: committed.id };
    }
    const { id, platform } = recorded;
    const sender = this.platforms.get(platform);
    if (!recorded.result) {
      if (!sender) return { status: 'waiting', id: null };
      return this.deliverer.sendUnrecorded(recorded, sender);
    }
    // Settles as soon as the drain has sent this reply, before its delivered mark is
    // committed (the next group commit does that): the caller need not wait a commit.
    const own = new Promise<DeliveryOutcome>((resolve) => this.watched.set(id, resolve));
    const lane = recorded.claim ? this.drain(recorded.reply.sessionKey, [recorded.claim], false) : this.drain(recorded.reply.sessionKey);
    const first = await Promise.race([own, lane]);
    this.watched.delete(id);
    if (typeof first !== 'string') return first;
    // Not sent yet. A recorded reply the ledger failed to claim or mark waits for it (its lane
    // tries again): sent unmarked now, a crash before the ledger heals could repeat it plainly.
    const row = this.deliverer.guard('getDelivery', id, () => this.ledger.getDelivery(id));
    if (row?.state === 'delivered') return { status: 'delivered', id, chunksSent: row.chunksTotal, recorded: true };
    if (row && (row.state === 'failed' || row.state === 'abandoned')) {
      return { status: 'failed', id, chunksSent: row.chunksDelivered, recorded: true, error: row.lastError ?? row.abandonReason ?? row.state, retryable: row.nextAttemptAt !== null, permanent: row.nextAttemptAt === null };
    }
    return { status: 'waiting', id };
  }

  /**
   * Drains a conversation's outbox: claims its head, sends it, and goes on with
   * the next, until it is empty or its head has to wait (platform away, retry
   * not due, another live sender). A drain already running takes over `claimed`
   * and looks again before it ends; the promise says how it ended.
   * `lookAgain` false: `claimed` is all the conversation owes (a reply claimed
   * in the commit that recorded it, so nothing before it is owed, and whatever
   * is recorded after it drains again): once it is sent the lane ends without
   * waiting for the delivered mark's commit to read the ledger.
   */
  drain(sessionKey: string, claimed: readonly ClaimedObligation[] = [], lookAgain = true): Promise<LaneEnd> {
    const running = this.lanes.get(sessionKey);
    if (running) {
      running.claimed.push(...claimed);
      running.lookAgain = true;
      return running.done;
    }
    const lane: Lane = { claimed: [...claimed], lookAgain: lookAgain || claimed.length === 0, done: Promise.resolve('idle') };
    this.lanes.set(sessionKey, lane);
    lane.done = this.runLane(sessionKey, lane);
    return lane.done;
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

  /**
   * Lets the chunks on their way finish (up to `deadlineMs`), stops every drain
   * before its next chunk (the rows stay owed, claimable at once by the next
   * start), stops the timers and marks the instance stopped. Returns how many
   * conversations were still sending at the deadline.
   */
  async stop(deadlineMs = 5_000): Promise<number> {
    if (this.stopped) return 0;
    this.stopping = true;
    for (const timer of this.timers) clearInterval(timer);
    for (const { timer } of this.laneTimers.values()) clearTimeout(timer);
    this.laneTimers.clear();
    const lanes = Promise.all([...this.lanes.values()].map((lane) => lane.done));
    await Promise.race([lanes, delay(deadlineMs)]);
    // Conversations still sending: their replies stay owed in the ledger, for the next start.
    const stillSending = this.lanes.size;
    // A group of its own is closed with it (a shared one, the gateway's, by the gateway).
    if (this.options.group) this.group.flush();
    else this.group.close();
    this.deliverer.flushFacts();
    this.stopped = true;
    this.deliverer.guard('stop', '-', () => this.ledger.stop());
    return stillSending;
  }

  /** Replies sendRecorded waits for, and how to tell it that a send ended delivered. */
  private readonly watched = new Map<string, (outcome: DeliveryOutcome) => void>();

  private async runLane(sessionKey: string, lane: Lane): Promise<LaneEnd> {
    try {
      for (;;) {
        if (this.stopping) return 'stopped';
        if (!this.deliverer.flushFacts()) {
          this.retryLaneIn(sessionKey, LEDGER_RETRY_MS);
          return 'ledger-failed';
        }
        let claim = lane.claimed.shift();
        if (!claim) {
          if (!lane.lookAgain) return 'idle';
          lane.lookAgain = true;
          // The next head is read in the group commit that writes the last send's marks, after them.
          const next = await this.deliverer.claimNext(sessionKey, this.deliverable());
          if (!next) {
            this.retryLaneIn(sessionKey, LEDGER_RETRY_MS);
            return 'ledger-failed';
          }
          // A sweep claimed the head meanwhile and handed it to this lane (the ledger found it held).
          if (next.kind !== 'claimed' && lane.claimed.length > 0) continue;
          if (next.kind === 'empty') return 'idle';
          if (next.kind === 'wait') {
            if (next.retryAt !== undefined) this.retryLaneIn(sessionKey, next.retryAt - this.options.clock.now());
            return 'idle';
          }
          claim = next.claim;
        }
        const sender = this.platforms.get(claim.target.platform);
        if (!sender) {
          // Unregistered between the claim and now: give it back, spending nothing.
          this.deliverer.guard('release', claim.id, () => this.ledger.release(claim.receipt));
          this.ledger.letGo(claim.id);
          return 'idle';
        }
        const outcome = await this.deliverer.deliverClaimed(claim, sender, () => this.stopping);
        // Delivered: the caller hears at once. Failed or stopped: once the row's state is committed (sendRecorded reads it then).
        if (outcome.status === 'delivered') this.watched.get(claim.id)?.(outcome);
        else await this.group.flushed();
        if (outcome.status === 'waiting-for-ledger') {
          this.retryLaneIn(sessionKey, LEDGER_RETRY_MS);
          return 'ledger-failed';
        }
      }
    } finally {
      if (this.lanes.get(sessionKey) === lane) this.lanes.delete(sessionKey);
    }
  }

  private retryLaneIn(sessionKey: string, ms: number): void {
    if (this.stopping) return;
    const at = this.options.clock.now() + Math.max(0, ms);
    const existing = this.laneTimers.get(sessionKey);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.laneTimers.delete(sessionKey);
      void this.drain(sessionKey);
    }, Math.max(0, ms) + 5);
    timer.unref();
    this.laneTimers.set(sessionKey, { at, timer });
  }

  private deliverable(): DeliverablePlatform[] {
    return [...this.platforms.values()].map(deliverableOf);
  }

  private sweep(): SweepReport | undefined {
    if (this.stopping) return EMPTY_REPORT;
    if (!this.deliverer.flushFacts()) return undefined;
    const suspended = this.options.suspendedMs?.() ?? 0;
    const suspendedMs = suspended - this.suspendedAtSweep;
    const outcome = this.deliverer.guard('sweepRecoverable', '-', () =>
      this.ledger.sweepRecoverable({ now: this.options.clock.now(), deliverablePlatforms: this.deliverable(), suspendedMs }),
    );
    if (!outcome) return undefined;
    this.suspendedAtSweep = suspended;
    for (const claim of outcome.claimed) void this.drain(claim.sessionKey, [claim]);
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

/** What the ledger needs to know of a connected platform. */
function deliverableOf(sender: PlatformSender): DeliverablePlatform {
  return {
    name: sender.name,
    // Keys that expire: the ledger tracks "may have arrived" as for a platform without keys.
    serverIdempotency: !tracksArrival(sender),
    ...(sender.canSend ? { canSend: sender.canSend.bind(sender) } : {}),
  };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
