import { randomBytes } from 'node:crypto';
import type { DeliveryPage, DeliveryRow, DeliveryState, GatewayOverview } from '../../../shared/api';
import type { Clock } from '../clock';
import type { Db } from '../db/database';
import { changeNotifier, type LedgerContext } from './context';
import { heartbeat, registerInstance, stopInstance } from './instances';
import * as actions from './operator-actions';
import { DEFAULT_POLICY, type LedgerPolicy } from './policy';
import { createSystemProbe, type ProcessProbe } from './process-identity';
import { loadChunks, type Chunk } from './rows';
import * as send from './send-path';
import { countOwed, sweepRecoverable, type SweepOutcome, type SweepParams } from './sweep';

/** Rows per state, as the overview shows them (less `owed`, which the gateway adds up). */
export type LedgerCounts = Omit<GatewayOverview['deliveries'], 'owed'>;

/** The counts of an empty ledger (also what the overview shows while the ledger cannot be read). */
export const EMPTY_COUNTS: LedgerCounts = {
  pending: 0,
  attempting: 0,
  failed: 0,
  failedPermanently: 0,
  abandoned: 0,
  discarded: 0,
  deliveredLastDay: 0,
};

export interface LedgerOptions {
  readonly db: Db;
  readonly clock: Clock;
  /** Default: the OS (/proc on Linux, ps elsewhere). */
  readonly probe?: ProcessProbe;
  /** Instance ids; default 16 random hex characters. */
  readonly newInstanceId?: () => string;
  readonly policy?: Partial<LedgerPolicy>;
  /** Called after every committed state change (the gateway emits `delivery.changed`). */
  readonly onChange?: (row: DeliveryRow) => void;
}

/**
 * The delivery ledger: every owed reply, durably recorded before it is sent, and
 * the sweep that finds what is still owed after a crash, a kill or a sleep.
 * Methods are synchronous (better-sqlite3) and throw only when SQLite itself
 * fails (busy, full, read-only, corrupt); expected outcomes are result values.
 * The delivery loop wraps every call so such a failure never stops a reply.
 */
export class Ledger {
  private rules: LedgerPolicy;
  private readonly ctx: LedgerContext;
  private currentId: string;
  private registered = false;

  constructor(private readonly options: LedgerOptions) {
    this.rules = { ...DEFAULT_POLICY, ...options.policy };
    const probe = options.probe ?? createSystemProbe();
    this.currentId = this.newId();
    // The context reads the policy in force at each call (setPolicy replaces it).
    const rules = (): LedgerPolicy => this.rules;
    this.ctx = {
      db: options.db,
      clock: options.clock,
      probe,
      get policy() {
        return rules();
      },
      instanceId: () => this.currentId,
      changed: changeNotifier(options.db, options.onChange),
    };
  }

  get policy(): LedgerPolicy {
    return this.rules;
  }

  /** Takes a new policy (a config reload) from the next call on; rules not named keep their values. */
  setPolicy(policy: Partial<LedgerPolicy>): void {
    this.rules = { ...this.rules, ...policy };
  }

  /** The instance rows are owned as (registered or not). */
  get instanceId(): string {
    return this.currentId;
  }

  /** Registers this process as an instance; call once before owning rows. */
  register(): string {
    registerInstance(this.ctx.db, this.currentId, this.ctx.probe.self(), this.ctx.clock.now());
    this.registered = true;
    return this.currentId;
  }

  /**
   * Renews the lease. If a sweeper has meanwhile declared this instance dead
   * (possible only when both the lease lapsed and the process looked gone, e.g.
   * from another pid namespace), its rows may already be claimed: re-register
   * under a fresh id instead of fighting over them.
   */
  heartbeat(): void {
    if (!this.registered) return;
    if (!heartbeat(this.ctx.db, this.currentId, this.ctx.clock.now())) {
      this.currentId = this.newId();
      this.register();
    }
  }

  /** A clean stop: rows this instance still owns are recoverable at once. */
  stop(): void {
    if (!this.registered) return;
    stopInstance(this.ctx.db, this.currentId, this.ctx.clock.now());
    this.registered = false;
  }

  recordObligation(input: send.RecordInput): send.RecordResult {
    return send.recordObligation(this.ctx, input);
  }

  markAttempting(id: string): send.AttemptResult {
    return send.markAttempting(this.ctx, id);
  }

  markChunkSending(id: string, chunkIndex: number): send.ChunkResult {
    return send.markChunkSending(this.ctx, id, chunkIndex);
  }

  markChunkUnsent(id: string, chunkIndex: number): send.ChunkResult {
    return send.markChunkUnsent(this.ctx, id, chunkIndex);
  }

  markChunkDelivered(id: string, chunkIndex: number, platformMessageId: string): send.ChunkResult {
    return send.markChunkDelivered(this.ctx, id, chunkIndex, platformMessageId);
  }

  markDelivered(id: string): send.DeliveredResult {
    return send.markDelivered(this.ctx, id);
  }

  markFailed(id: string, failure: send.SendFailure): send.FailedResult {
    return send.markFailed(this.ctx, id, failure);
  }

  sweepRecoverable(params: SweepParams): SweepOutcome {
    return sweepRecoverable(this.ctx, params);
  }

  chunks(id: string): Chunk[] {
    return loadChunks(this.ctx.db, id);
  }

  getDelivery(id: string): DeliveryRow | undefined {
    return actions.getDelivery(this.ctx, id);
  }

  listDeliveries(query: actions.DeliveryQuery = {}): DeliveryPage {
    return actions.listDeliveries(this.ctx, query);
  }

  /** The whole text of a reply, or undefined for an unknown id. */
  deliveryText(id: string): string | undefined {
    return actions.deliveryText(this.ctx, id);
  }

  /** Makes every failed or given-up row of `platform` pending again; returns how many. */
  retryPlatform(platform: string): number {
    return actions.retryPlatform(this.ctx, platform);
  }

  retryDelivery(id: string): actions.ActionResult {
    return actions.retryDelivery(this.ctx, id);
  }

  discardDelivery(id: string): actions.ActionResult {
    return actions.discardDelivery(this.ctx, id);
  }

  /**
   * Replies recorded for a conversation since `since`: after a crash, tells a
   * turn whose reply was recorded (but not yet appended to the transcript) from
   * one that never got that far.
   */
  repliesSince(sessionKey: string, since: number): { id: string; content: string; createdAt: number }[] {
    return this.ctx.db
      .prepare(
        `SELECT id, content, created_at AS createdAt FROM ledger_obligations
         WHERE created_at >= ? AND session_key = ? ORDER BY created_at`,
      )
      .all(since, sessionKey) as { id: string; content: string; createdAt: number }[];
  }

  /**
   * How many rows are in each state that matters at a glance. Reads only the
   * unsettled rows and the last day's deliveries (through the state index), so
   * its cost does not grow with years of delivered history.
   */
  stateCounts(now: number): LedgerCounts {
    const rows = this.ctx.db
      .prepare(
        `SELECT state, next_attempt_at IS NULL AS final, abandon_reason = ? AS discarded, count(*) AS n
         FROM ledger_obligations WHERE state IN ('pending', 'attempting', 'failed', 'abandoned')
         GROUP BY state, final, discarded`,
      )
      .all(actions.DISCARDED) as { state: DeliveryState; final: number; discarded: number | null; n: number }[];
    const counts = { ...EMPTY_COUNTS };
    for (const row of rows) {
      if (row.state === 'failed' && row.final) counts.failedPermanently += row.n;
      else if (row.state === 'abandoned' && row.discarded) counts.discarded += row.n;
      else if (row.state !== 'delivered') counts[row.state] += row.n;
    }
    counts.deliveredLastDay = (
      this.ctx.db
        .prepare(`SELECT count(*) AS n FROM ledger_obligations INDEXED BY ledger_obligations_delivered WHERE state = 'delivered' AND delivered_at >= ?`)
        .get(now - 86_400_000) as { n: number }
    ).n;
    return counts;
  }

  owedCount(): number {
    return countOwed(this.ctx);
  }

  private newId(): string {
    return this.options.newInstanceId?.() ?? randomBytes(8).toString('hex');
  }
}
