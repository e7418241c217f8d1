import { randomBytes } from 'node:crypto';
import type { DeliveryPage, DeliveryRow, DeliveryState, GatewayOverview } from '../../../shared/api';
import type { Clock } from '../clock';
import { cachedStatement, durably, transact, type Db } from '../db/database';
import { changeNotifier, type LedgerContext } from './context';
import { heartbeat, loadInstance, registerInstance, stopInstance, takeOverInstances } from './instances';
import { judgeOwner } from './liveness';
import * as actions from './operator-actions';
import { DEFAULT_POLICY, retryDelayMs, type LedgerPolicy } from './policy';
import { createSystemProbe, type ProcessProbe } from './process-identity';
import type { Receipt } from './receipt';
import { encodeParts } from './parts';
import { chunksOf, loadObligation, loadRow, outboxRowOf, toDeliveryRow, type Chunk, type DeliveryTarget, type InsertedRow, type ObligationSql } from './rows';
import type { ObligationState } from './states';
import {
  awakeNow,
  OwedCount,
  describeClaim,
  HEAD_OF,
  judgeContext,
  moveDelivered,
  sweepRecoverable,
  verdictFor,
  type ClaimedObligation,
  type DeliverablePlatform,
  type SweepOutcome,
  type SweepParams,
} from './sweep';
import { HEAD_ROW, RECORD_SQL, chunkSql, obligationSql } from './transitions';

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

// The send path's statements, each built once: cachedStatement finds a statement by its
// text, and a text built at every call is hashed again at every call.
/** Every part arrived (markDelivered). */
const DELIVER = obligationSql('deliver');
/** Delivered rows this process leaves in the outbox before it moves them to the history in the commit of the next one. */
export const MOVE_EVERY = 256;

/** The longest error text a row keeps (code points): a 1 MB error must not ride in every list row. */
export const MAX_ERROR_CHARS = 500;

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
  /** Whether `onChange` has anybody to tell now (default: always): no row is read back for nobody. */
  readonly listening?: () => boolean;
}

export interface RecordInput {
  readonly obligationId: string;
  readonly sessionKey: string;
  readonly platform: string;
  readonly chatId: string;
  readonly threadId: string | null;
  readonly replyTo: string | null;
  readonly content: string;
  /** The reply split to the platform's limit; empty means one chunk, the content. */
  readonly chunks: readonly string[];
  /** The user message this answers (recovery tells answered messages from unanswered ones by it). */
  readonly messageRef?: string | null;
}

export type RecordResult = { readonly created: boolean; readonly row: DeliveryRow };

export type { Receipt } from './receipt';

export type ClaimResult =
  | { readonly ok: true; readonly claim: ClaimedObligation }
  | {
      readonly ok: false;
      readonly reason: 'not-found' | 'not-owed' | 'owned-elsewhere' | 'held' | 'behind-earlier-reply' | 'not-due' | 'lost-race';
      readonly state?: ObligationState;
    };

/** What the next reply of a conversation needs before it can go. */
export type NextInLane =
  | { readonly kind: 'claimed'; readonly claim: ClaimedObligation }
  | { readonly kind: 'empty' }
  /** The head waits: for its platform, for a live owner elsewhere, or until `retryAt`. */
  | { readonly kind: 'wait'; readonly reason: 'platform' | 'owned-elsewhere' | 'held' | 'retry-later'; readonly retryAt?: number };

export type WriteResult = { readonly ok: true } | { readonly ok: false; readonly reason: 'stale' };

/** `marker`: this send must carry the resend marker (the chunk may have arrived before). */
export type SendingResult = { readonly ok: true; readonly marker: boolean } | { readonly ok: false; readonly reason: 'stale' };

export interface SendFailure {
  readonly error: string;
  readonly retryable: boolean;
  /** The platform's retry-after, when it gave one (rate limits). */
  readonly retryAfterMs?: number | undefined;
  /** The chat is gone or the bot is blocked: retrying cannot help. */
  readonly permanent: boolean;
  /** Due again at once (the platform dropped; its reconnect's sweep sends it), not after the backoff. */
  readonly retryWhenConnected?: boolean;
}

export type FailedResult =
  | { readonly ok: true; readonly state: 'failed' | 'abandoned'; readonly nextAttemptAt: number | null }
  | { readonly ok: false; readonly reason: 'stale' };

/**
 * A fact about a send that happened while the ledger could not be written
 * (disk full, busy past the timeout). Kept in memory and written back before
 * this process claims anything again, so a chunk already sent is never resent
 * plain (docs/delivery.md, "When the ledger itself fails").
 */
export type SendFact =
  | { readonly kind: 'chunk-sending'; readonly id: string; readonly index: number }
  | { readonly kind: 'chunk-delivered'; readonly id: string; readonly index: number; readonly platformMessageId: string }
  | { readonly kind: 'delivered'; readonly id: string };

/**
 * The delivery ledger: every owed reply, durably recorded before it is sent, its
 * chunks' progress, and the sweep that finds what is still owed after a crash,
 * a kill or a sleep. Every change is a verb of the state machine in
 * transitions.ts. Methods are synchronous (better-sqlite3) and throw only when
 * SQLite itself fails (busy, full, read-only, corrupt); expected outcomes are
 * result values.
 */
export class Ledger {
  readonly policy: LedgerPolicy;
  private readonly ctx: LedgerContext;
  private readonly probe: ProcessProbe;
  private currentId: string;
  private registered = false;
  /**
   * Rows this process holds a claim on (or sends without one, the ledger having
   * failed): its own sweep never claims them, and Retry is refused while held.
   * A claim holds its row until its sender lets go (`letGo`), which the
   * deliverer does once everything it sent is written.
   */
  private readonly held = new Set<string>();
  /**
   * What an exclusive register found: instances that had not stopped cleanly,
   * and how many of them ran on another boot of this machine (or an unknown
   * one) — those may have died with the machine, taking commits made since the
   * last fsync with them (recovery then reads every recent transcript).
   */
  tookOver: { readonly instances: number; readonly fromAnotherBoot: number } = { instances: 0, fromAnotherBoot: 0 };
  private sweptOnce = false;
  /** Rows this process marked delivered since it last moved delivered rows to the history. */
  private unmoved = 0;

  constructor(private readonly options: LedgerOptions) {
    this.policy = { ...DEFAULT_POLICY, ...options.policy };
    this.probe = options.probe ?? createSystemProbe();
    this.currentId = this.newId();
    const notify = changeNotifier(options.db, options.onChange, options.listening);
    const owed = OwedCount.of(options.db);
    this.ctx = {
      db: options.db,
      clock: options.clock,
      probe: this.probe,
      policy: this.policy,
      instanceId: () => this.currentId,
      changed: (id, row) => {
        owed.changed();
        notify(id, row);
      },
      holds: (id) => this.held.has(id),
      owedCount: () => owed.read(),
    };
  }

  /** The instance rows are owned as (registered or not). */
  get instanceId(): string {
    return this.currentId;
  }

  /**
   * Registers this process as an instance; call once before owning rows. With
   * `exclusive` (this process holds the data directory's lock, so no other
   * gateway can be running), every other instance still marked running is dead,
   * and its rows are claimable at once: no lease to wait out after a restart.
   */
  register(options: { readonly exclusive?: boolean } = {}): string {
    const now = this.ctx.clock.now();
    this.ctx.db
      .transaction(() => {
        if (options.exclusive) this.tookOver = takeOverInstances(this.ctx.db, now, this.probe.bootId());
        registerInstance(this.ctx.db, this.currentId, this.probe.self(), now);
      })
      .immediate();
    this.registered = true;
    return this.currentId;
  }

  /**
   * Renews the lease. If a sweeper has meanwhile declared this instance dead
   * (possible only when both the lease lapsed and the process looked gone, e.g.
   * from another pid namespace), its rows may already be claimed: re-register
   * under a fresh id instead of fighting over them (the old receipts are stale).
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
    // Fsynced, and with it every commit before it: after a clean stop, a power cut costs nothing.
    durably(this.ctx.db, () => stopInstance(this.ctx.db, this.currentId, this.ctx.clock.now()));
    this.registered = false;
  }

  /** Policy changes from a config reload take effect for the next decision. */
  setPolicy(policy: Partial<LedgerPolicy>): void {
    Object.assign(this.policy, policy);
  }

  /**
   * Records an owed reply, durably (the commit is fsynced) before anything is
   * sent, at the end of its conversation's outbox. Idempotent: the id is derived
   * from the turn and the content, so recording the same reply again finds the
   * existing row and changes nothing — a delivered row is never reset. The new
   * row is pending, owned by this instance: another gateway's sweep leaves it to
   * this one while it lives.
   */
  recordObligation(input: RecordInput): RecordResult {
    const inserted = durably(this.ctx.db, () => this.insertReply(input, undefined));
    if (inserted) {
      this.ctx.changed(input.obligationId, inserted.row);
      return described(true, inserted.row);
    }
    const row = loadObligation(this.ctx.db, input.obligationId);
    if (!row) throw new Error(`obligation ${input.obligationId} vanished right after it was recorded`);
    return described(false, row);
  }

  /**
   * Records a reply and, when it can go now — its platform takes sends to that
   * chat, and no earlier reply of its conversation is still owed — records it
   * already claimed (attempting, owned by this instance, fence 1) with its first
   * chunk already on its way, in one fsynced commit: the one durable write a
   * reply needs before it is sent. Safe because the caller sends it with no
   * await in between (nothing else of this process can take it meanwhile; no
   * other process can, since this instance owns it and lives). Otherwise, or if
   * the reply was recorded before, it is what recordObligation does.
   *
   * In the state machine (transitions.ts) this is `record` followed by `claim`
   * and the first chunk's `send`, taken in one step: the row is never seen
   * pending.
   */
  recordClaimed(input: RecordInput, platform: DeliverablePlatform | undefined): RecordResult & { readonly claim?: ClaimedObligation } {
    const { db } = this.ctx;
    if (!platform || !(platform.canSend?.({ chatId: input.chatId, threadId: input.threadId }) ?? true)) return this.recordObligation(input);
    return durably(db, () => {
      const earlierOwed = (cachedStatement(db, HEAD_OF).get({ session: input.sessionKey }) as { head: number | null }).head !== null;
      if (earlierOwed) return this.recordObligation(input);
      const inserted = this.insertReply(input, platform);
      if (!inserted) return this.recordObligation(input); // recorded before: found, changed nothing
      this.held.add(input.obligationId);
      this.ctx.changed(input.obligationId, inserted.row);
      // Described as the claim sees it: its first part is on its way by this very claim, not
      // after a send nobody saw, so it has arrived nowhere yet (the row says "on its way").
      const claim = describeClaim({ ...inserted.row, part_sending: 0 }, new Map([[platform.name, platform]]));
      const result = described(true, inserted.row);
      return Object.assign(result, { claim: platform.serverIdempotency ? claim : { ...claim, sendingMarked: { index: 0, marker: false } } });
    });
  }

  /**
   * Inserts a reply at the end of its conversation's outbox, with its chunks:
   * pending, or — `claimedFor` given — attempting, owned here with fence 1, its
   * first chunk already on its way unless the platform deduplicates. Undefined
   * when the id exists already (recording the same reply again changes nothing).
   * Runs inside the caller's transaction.
   */
  private insertReply(input: RecordInput, claimedFor: DeliverablePlatform | undefined): { row: InsertedRow } | undefined {
    const { db } = this.ctx;
    const now = this.ctx.clock.now();
    const texts = input.chunks.length > 0 ? input.chunks : [input.content];
    const parts = encodeParts(input.content, texts);
    const firstOnItsWay = claimedFor !== undefined && !claimedFor.serverIdempotency;
    const inserted = cachedStatement(db, RECORD_SQL).run({
      id: input.obligationId,
      sessionKey: input.sessionKey,
      platform: input.platform,
      chatId: input.chatId,
      threadId: input.threadId,
      replyTo: input.replyTo,
      content: input.content,
      parts,
      state: claimedFor ? 'attempting' : 'pending',
      me: this.currentId,
      fence: claimedFor ? 1 : 0,
      lastAttemptAt: claimedFor ? now : null,
      now,
      chunks: texts.length,
      sending: firstOnItsWay ? 1 : 0,
      messageRef: input.messageRef ?? null,
    });
    if (inserted.changes !== 1) return undefined;
    const rowNumber = Number(inserted.lastInsertRowid);
    // The row as inserted, built here rather than read back (a RETURNING clause costs a
    // fifth of the insert): what the statement set, the row number SQLite chose, the
    // columns' defaults (ledger.test.ts compares it with the row the database holds).
    const row: InsertedRow = {
      row: rowNumber,
      id: input.obligationId,
      session_key: input.sessionKey,
      platform: input.platform,
      chat_id: input.chatId,
      thread_id: input.threadId,
      reply_to: input.replyTo,
      content: input.content,
      parts,
      state: claimedFor ? 'attempting' : 'pending',
      attempts: 0,
      owner_instance: this.currentId,
      created_at: now,
      updated_at: now,
      last_attempt_at: claimedFor ? now : null,
      next_attempt_at: null,
      delivered_at: null,
      last_error: null,
      abandon_reason: null,
      chunk_count: texts.length,
      chunks_delivered: 0,
      part_sending: firstOnItsWay ? 1 : 0,
      part_maybe: 0,
      fence: claimedFor ? 1 : 0,
      message_ref: input.messageRef ?? null,
    };
    return { row };
  }

  /**
   * Claims one row to send it now, if this process may: it is owed, due, first
   * in its conversation's outbox, and owned by nobody, by this process (and not
   * already held here), or by an instance that is provably gone. A claim spends
   * no attempt (only a failed send does) and returns the receipt every later
   * write presents.
   */
  markAttempting(id: string, platforms?: readonly DeliverablePlatform[]): ClaimResult {
    const row = loadObligation(this.ctx.db, id);
    if (!row) return { ok: false, reason: 'not-found' };
    const available = this.availability(row);
    if (available !== 'available') return { ok: false, reason: available, state: row.state };
    return this.claimRow(row, platforms);
  }

  /**
   * The next reply of a conversation, claimed if it can go now. The head of the
   * outbox holds the line: while it waits (its platform is away, a retry is not
   * due), nothing behind it is sent.
   */
  claimNext(sessionKey: string, platforms: readonly DeliverablePlatform[]): NextInLane {
    for (let guard = 0; guard < 100; guard++) {
      const head = cachedStatement(this.ctx.db, `SELECT * FROM ledger_outbox WHERE row = ${HEAD_ROW}`).get({ session: sessionKey }) as
        | ObligationSql
        | undefined;
      if (!head) return { kind: 'empty' };
      const now = this.ctx.clock.now();
      const available = this.availability(head);
      if (available === 'held') return { kind: 'wait', reason: 'held' };
      if (available === 'owned-elsewhere') return { kind: 'wait', reason: 'owned-elsewhere' };
      if (available === 'not-due') return { kind: 'wait', reason: 'retry-later', retryAt: head.next_attempt_at ?? now };
      const verdict = verdictFor(head, awakeNow(this.ctx), this.policy);
      if (verdict) {
        if (verdict.kind === 'settle') this.applyRead('settle', head, {});
        else this.applyRead('abandon', head, { reason: verdict.reason });
        continue;
      }
      const platform = platforms.find((p) => p.name === head.platform);
      if (!platform || !(platform.canSend?.(targetOf(head)) ?? true)) return { kind: 'wait', reason: 'platform' };
      const claimed = this.claimRow(head, platforms);
      if (claimed.ok) return { kind: 'claimed', claim: claimed.claim };
      if (claimed.reason !== 'lost-race') return { kind: 'wait', reason: 'owned-elsewhere' };
    }
    return { kind: 'wait', reason: 'held' };
  }

  /**
   * Written just before a chunk is handed to a platform that cannot deduplicate:
   * if this process dies before the outcome is recorded, the chunk may have
   * arrived. Says whether this send carries the marker. Refused (stale) when the
   * receipt no longer holds or the user discarded the row: stop sending.
   */
  markChunkSending(receipt: Receipt, chunkIndex: number): SendingResult {
    // Fsynced: after a power cut the chunk must still say it may have arrived.
    const row = durably(this.ctx.db, () => this.chunkWrite('send', receipt, chunkIndex, {}));
    return row ? { ok: true, marker: row.part_maybe === 1 } : { ok: false, reason: 'stale' };
  }

  /** The platform refused the chunk outright: this send did not arrive ("may have arrived" stays). */
  markChunkUnsent(receipt: Receipt, chunkIndex: number): WriteResult {
    return this.chunkWrite('unsent', receipt, chunkIndex, {}) ? { ok: true } : { ok: false, reason: 'stale' };
  }

  /** The platform confirmed the chunk: it is never sent again. */
  markChunkDelivered(receipt: Receipt, chunkIndex: number, platformMessageId: string): WriteResult {
    void platformMessageId; // no platform needs a part's own id later: not kept
    // One statement of the reply's row: atomic without a transaction of its own.
    if (this.chunkWrite('deliver', receipt, chunkIndex, {}) === undefined) return { ok: false, reason: 'stale' };
    this.ctx.changed(receipt.id);
    return { ok: true };
  }

  /**
   * Every chunk arrived, `last` (the chunk just confirmed) with them: one write of
   * the reply's row. Also from abandoned: a reply discarded while its last chunk
   * was on its way still arrived, and the ledger says so.
   */
  markDelivered(receipt: Receipt, last?: { readonly index: number; readonly platformMessageId: string }): WriteResult {
    void last; // every part is marked by the one write: the parts are columns of the reply's row
    const { db } = this.ctx;
    const now = this.ctx.clock.now();
    const marked = transact(db, () => {
      const changes = cachedStatement(db, DELIVER).run({
        now,
        me: this.currentId,
        row: receipt.row,
        owner: receipt.owner,
        fence: receipt.fence,
      }).changes;
      if (changes !== 1) return false;
      // Every MOVE_EVERY replies, the delivered ones go to the history in this commit. A move
      // that fails is rolled back alone (its own savepoint): the reply is delivered all the
      // same, and the next sweep moves what is left.
      if (++this.unmoved >= MOVE_EVERY) {
        try {
          db.transaction(() => moveDelivered(db))();
          this.unmoved = 0;
        } catch {
          this.unmoved = 1;
        }
      }
      return true;
    });
    if (!marked) return { ok: false, reason: 'stale' };
    this.ctx.changed(receipt.id);
    return { ok: true };
  }

  /**
   * A chunk handed to the platform failed: one attempt spent. Permanent or
   * non-retryable errors fail the row for good; retryable ones schedule the
   * next attempt with exponential backoff, never sooner than the platform's
   * retry-after — or abandon the row once the attempts reach the cap.
   */
  markFailed(receipt: Receipt, failure: SendFailure): FailedResult {
    const row = loadRow(this.ctx.db, receipt.row);
    if (!row || row.state !== 'attempting' || row.owner_instance !== receipt.owner || row.fence !== receipt.fence) {
      return { ok: false, reason: 'stale' };
    }
    const now = this.ctx.clock.now();
    const attempts = row.attempts + 1;
    let state: 'failed' | 'abandoned' = 'failed';
    let next: number | null = null;
    let reason: string | null = null;
    if (failure.permanent || !failure.retryable) {
      next = null;
    } else if (attempts >= this.policy.maxAttempts) {
      state = 'abandoned';
      reason = `gave up after ${attempts} failed attempts`;
    } else {
      next = failure.retryWhenConnected && failure.retryAfterMs === undefined ? now : now + retryDelayMs(this.policy, attempts, failure.retryAfterMs);
    }
    const error = boundError(failure.permanent ? `permanent: ${failure.error}` : failure.error);
    const changes = this.obligationWrite('fail', {
      row: receipt.row,
      owner: receipt.owner,
      fence: receipt.fence,
      state,
      next,
      error,
      reason,
    });
    if (changes !== 1) return { ok: false, reason: 'stale' };
    this.ctx.changed(receipt.id);
    return { ok: true, state, nextAttemptAt: next };
  }

  /** Gives a claim back without a failed send: no attempt spent. */
  release(receipt: Receipt): WriteResult {
    const changes = this.obligationWrite('release', { row: receipt.row, owner: receipt.owner, fence: receipt.fence });
    if (changes === 1) this.ctx.changed(receipt.id);
    return changes === 1 ? { ok: true } : { ok: false, reason: 'stale' };
  }

  /** Whether the receipt still holds an attempting row (read only: checked between chunks where no write is needed). */
  stillHolds(receipt: Receipt): boolean {
    return (
      cachedStatement(
        this.ctx.db,
        `SELECT 1 FROM ledger_outbox WHERE row = ? AND owner_instance = ? AND fence = ? AND state = 'attempting'`,
      ).get(receipt.row, receipt.owner, receipt.fence) !== undefined
    );
  }

  /** Writes back a fact the ledger could not take when it happened (see SendFact). */
  replay(fact: SendFact): true {
    const { db } = this.ctx;
    const now = this.ctx.clock.now();
    // A row no longer in the outbox was delivered (and moved): nothing left to say about it.
    const row = outboxRowOf(db, fact.id);
    if (row === undefined) return true;
    switch (fact.kind) {
      case 'chunk-sending':
        cachedStatement(db, chunkSql('sendingAnyway')).all({ row, index: fact.index, now });
        break;
      case 'chunk-delivered':
        cachedStatement(db, chunkSql('deliveredAnyway')).all({ row, index: fact.index, now });
        break;
      case 'delivered':
        this.obligationWrite('deliveredAnyway', { row });
        break;
    }
    this.ctx.changed(fact.id);
    return true;
  }

  /** Marks a row as handled by this process outside any claim (a send while the ledger fails). */
  hold(id: string): void {
    this.held.add(id);
  }

  /** This process is done with the row: its own sweep may take it again. */
  letGo(id: string): void {
    this.held.delete(id);
  }

  isHeld(id: string): boolean {
    return this.held.has(id);
  }

  sweepRecoverable(params: SweepParams): SweepOutcome {
    const outcome = sweepRecoverable(this.ctx, { checkOrphans: !this.sweptOnce, moveDelivered: !this.sweptOnce || this.unmoved > 0, ...params });
    this.sweptOnce = true;
    this.unmoved = 0;
    for (const claim of outcome.claimed) this.held.add(claim.id);
    return outcome;
  }

  chunks(id: string): Chunk[] {
    const row = loadObligation(this.ctx.db, id);
    return row ? chunksOf(row) : [];
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

  /** Makes every failed or given-up row of `platform` pending again (not discarded ones, not ones being sent); returns how many. */
  retryPlatform(platform: string): number {
    return actions.retryPlatform(this.ctx, platform, (row) => this.senderAlive(row));
  }

  /** The user's Retry: refused, with the reason, while a live sender still holds the row. */
  retryDelivery(id: string): actions.ActionResult {
    return actions.retryDelivery(this.ctx, id, (row) => this.senderAlive(row));
  }

  /** The user's Discard: a sender in the middle of it stops after its current chunk. */
  discardDelivery(id: string): actions.ActionResult {
    return actions.discardDelivery(this.ctx, id);
  }

  /** The reply recorded for one user message, if any. */
  replyFor(sessionKey: string, messageRef: string): { id: string; content: string } | undefined {
    // The outbox (small: what is in flight) is read whole; the history by its index.
    return (cachedStatement(this.ctx.db, `SELECT id, content FROM ledger_outbox WHERE session_key = ? AND message_ref = ? ORDER BY row LIMIT 1`).get(sessionKey, messageRef) ??
      cachedStatement(this.ctx.db, `SELECT id, content FROM ledger_history WHERE session_key = ? AND message_ref = ? ORDER BY row LIMIT 1`).get(sessionKey, messageRef)) as
      | { id: string; content: string }
      | undefined;
  }

  /**
   * How many rows are in each state that matters at a glance. Reads the outbox
   * (what is in flight, owed or given up, and the last few hundred delivered)
   * and the history's last day of deliveries (its delivered_at index), so its
   * cost does not grow with years of delivered history.
   */
  stateCounts(now: number): LedgerCounts {
    const dayAgo = now - 86_400_000;
    const rows = cachedStatement(
      this.ctx.db,
      `SELECT state, next_attempt_at IS NULL AS final, abandon_reason = ? AS discarded, count(*) AS n
       FROM ledger_outbox WHERE state != 'delivered' OR delivered_at >= ?
       GROUP BY state, final, discarded`,
    ).all(actions.DISCARDED, dayAgo) as { state: DeliveryState; final: number; discarded: number | null; n: number }[];
    const counts = { ...EMPTY_COUNTS };
    for (const row of rows) {
      if (row.state === 'failed' && row.final) counts.failedPermanently += row.n;
      else if (row.state === 'abandoned' && row.discarded) counts.discarded += row.n;
      else if (row.state === 'delivered') counts.deliveredLastDay += row.n;
      else counts[row.state] += row.n;
    }
    counts.deliveredLastDay += (
      cachedStatement(this.ctx.db, `SELECT count(*) AS n FROM ledger_history INDEXED BY ledger_history_delivered WHERE delivered_at >= ?`).get(dayAgo) as {
        n: number;
      }
    ).n;
    return counts;
  }

  /** Replies still owed (states.ts OWED): the one count every view shows. */
  owedCount(): number {
    return this.ctx.owedCount();
  }

  private claimRow(row: ObligationSql, platforms: readonly DeliverablePlatform[] | undefined): ClaimResult {
    const changes = this.applyRead('claim', row, {});
    if (changes !== 1) {
      const now = loadRow(this.ctx.db, row.row);
      const behind = now && now.state === row.state && now.fence === row.fence && now.owner_instance === row.owner_instance;
      return { ok: false, reason: behind ? 'behind-earlier-reply' : 'lost-race' };
    }
    const claimed = loadRow(this.ctx.db, row.row)!;
    this.held.add(row.id);
    this.ctx.changed(row.id, claimed);
    const byName = new Map((platforms ?? []).map((p) => [p.name, p]));
    return { ok: true, claim: describeClaim(claimed, byName) };
  }

  /** May this process take `row` now (leaving aside its place in the outbox)? */
  private availability(row: ObligationSql): 'available' | 'not-owed' | 'held' | 'owned-elsewhere' | 'not-due' {
    if (row.state === 'delivered' || row.state === 'abandoned' || (row.state === 'failed' && row.next_attempt_at === null)) return 'not-owed';
    if (this.held.has(row.id)) return 'held';
    if (row.state === 'failed') {
      return (row.next_attempt_at ?? 0) <= this.ctx.clock.now() ? 'available' : 'not-due';
    }
    if (row.owner_instance === null || row.owner_instance === this.currentId) return 'available';
    return this.ownerAlive(row.owner_instance) ? 'owned-elsewhere' : 'available';
  }

  /** A live sender holds the row: this process (a claim in hand), or a live instance elsewhere. */
  private senderAlive(row: ObligationSql): boolean {
    if (this.held.has(row.id)) return true;
    if (row.owner_instance === null || row.owner_instance === this.currentId) return false;
    if (row.state !== 'attempting' && row.state !== 'abandoned' && row.state !== 'pending') return false;
    return this.ownerAlive(row.owner_instance);
  }

  private ownerAlive(owner: string): boolean {
    return judgeOwner(loadInstance(this.ctx.db, owner), judgeContext(this.ctx, this.ctx.clock.now())).alive;
  }

  private applyRead(verb: 'claim' | 'settle' | 'abandon', row: ObligationSql, extra: Record<string, unknown>): number {
    const changes = this.obligationWrite(verb, {
      row: row.row,
      readState: row.state,
      readOwner: row.owner_instance,
      readFence: row.fence,
      ...(verb === 'claim' ? { session: row.session_key } : {}),
      ...extra,
    });
    if (changes === 1 && verb !== 'claim') this.ctx.changed(row.id);
    return changes;
  }

  private obligationWrite(verb: Parameters<typeof obligationSql>[0], params: Record<string, unknown>): number {
    const now = this.ctx.clock.now();
    return cachedStatement(this.ctx.db, obligationSql(verb)).run({ now, me: this.currentId, ...params }).changes;
  }

  private chunkWrite(verb: 'send' | 'unsent' | 'deliver', receipt: Receipt, index: number, extra: Record<string, unknown>): { part_maybe: number } | undefined {
    return cachedStatement(this.ctx.db, chunkSql(verb)).get({
      row: receipt.row,
      index,
      owner: receipt.owner,
      fence: receipt.fence,
      now: this.ctx.clock.now(),
      ...extra,
    }) as { part_maybe: number } | undefined;
  }

  private newId(): string {
    return this.options.newInstanceId?.() ?? randomBytes(8).toString('hex');
  }
}

/**
 * A record's result, its row described for the window only when somebody asks
 * (the API's record call does; a reply recorded to be sent at once does not).
 */
function described(created: boolean, sql: InsertedRow): { created: boolean; readonly row: DeliveryRow } {
  let row: DeliveryRow | undefined;
  return {
    created,
    get row() {
      return (row ??= toDeliveryRow(sql));
    },
  };
}

function targetOf(row: ObligationSql): DeliveryTarget {
  return { platform: row.platform, chatId: row.chat_id, threadId: row.thread_id, replyTo: row.reply_to };
}

/** At most MAX_ERROR_CHARS code points (an emoji is never cut in half). */
export function boundError(text: string): string {
  if (text.length <= MAX_ERROR_CHARS) return text;
  const points = [...text.slice(0, MAX_ERROR_CHARS * 2)];
  return points.length > MAX_ERROR_CHARS ? `${points.slice(0, MAX_ERROR_CHARS - 1).join('')}…` : points.join('');
}
