import type { SweepReport } from '../../../shared/api';
import type { LedgerContext } from './context';
import { declareDead, listInstances, orphanOwners, pruneInstances } from './instances';
import { judgeOwner, type JudgeContext } from './liveness';
import type { LedgerPolicy } from './policy';
import { cachedStatement, type Db } from '../db/database';
import type { Receipt } from './receipt';
import { chunksOf, loadRow, type Chunk, type DeliveryTarget, type InsertedRow, type ObligationSql } from './rows';
import { OWED, OWED_ROWS } from './states';
import { HEAD_ROW, MOVE_SQL, obligationSql } from './transitions';

/** A platform connected in this process, and whether its server deduplicates resends. */
export interface DeliverablePlatform {
  readonly name: string;
  /** Matrix txnId, Discord nonce: a resend with the same key cannot appear twice. */
  readonly serverIdempotency: boolean;
  /** Whether a send to this destination can go out now (absent: yes). */
  canSend?(target: { readonly chatId: string; readonly threadId: string | null }): boolean;
}

export interface SweepParams {
  readonly now: number;
  readonly deliverablePlatforms: readonly DeliverablePlatform[];
  /** Time the machine was suspended since this process's previous sweep (measured: power/sleep-detector.ts): not awake time. */
  readonly suspendedMs?: number;
  /** Claim at most this many rows (default: the policy's sweepLimit). */
  readonly limit?: number;
  /**
   * Also look for owed rows whose owner has no instance row at all (written by
   * a Homing that pruned instances still owning rows): a walk of every owed
   * row, so the ledger asks for it once per process, on its first sweep.
   */
  readonly checkOrphans?: boolean;
  /**
   * Also move delivered rows from the outbox to the history (moveDelivered): a
   * scan of the outbox, so asked for when this process has delivered rows
   * since it last moved them, and on its first sweep (a predecessor's).
   */
  readonly moveDelivered?: boolean;
}

/** A row this process has just claimed: it now owns sending it. */
export interface ClaimedObligation {
  readonly id: string;
  readonly sessionKey: string;
  readonly target: DeliveryTarget;
  readonly content: string;
  /** Failed sends so far. */
  readonly attempts: number;
  /** Presented by every write about this send (ledger.ts Receipt). */
  readonly receipt: Receipt;
  /** Its place in the conversation's outbox. */
  readonly seq: number;
  /** When the reply was recorded (wall-clock ms): no chunk of it was sent earlier. */
  readonly recordedAt: number;
  readonly chunks: readonly Chunk[];
  /** The first chunk not known delivered: sending resumes here. */
  readonly firstChunk: Chunk;
  /** That chunk was being sent when its sender stopped: it may have arrived. */
  readonly mayHaveArrived: boolean;
  /** It may have arrived and the platform cannot deduplicate: prefix the marker. */
  readonly needsMarker: boolean;
  /**
   * The claim's own commit already marked this chunk on its way (recordClaimed):
   * the sender skips that write for it and uses `marker` as markChunkSending would have said.
   */
  readonly sendingMarked?: { readonly index: number; readonly marker: boolean };
}

export interface SweepOutcome {
  readonly claimed: readonly ClaimedObligation[];
  readonly report: SweepReport;
  /** Claims another sweeper won between our read and our compare-and-swap. */
  readonly lostRaces: number;
}

/** The columns a sweep decides on (CANDIDATE_COLUMNS). */
type Candidate = Pick<
  ObligationSql,
  | 'row'
  | 'id'
  | 'state'
  | 'owner_instance'
  | 'attempts'
  | 'platform'
  | 'owed_since_awake'
  | 'next_attempt_at'
  | 'chunk_count'
  | 'chunks_delivered'
  | 'fence'
  | 'session_key'
  | 'chat_id'
  | 'thread_id'
>;

const CANDIDATE_COLUMNS =
  'row, id, state, owner_instance, attempts, platform, owed_since_awake, next_attempt_at, chunk_count, chunks_delivered, fence, session_key, chat_id, thread_id';

/** Owed rows that may be taken now: not a retry that is not due yet. */
const TAKEABLE = `${OWED} AND (state != 'failed' OR next_attempt_at <= @now)`;

/** The head of a conversation's outbox (transitions.ts HEAD_ROW), as a query of its own. */
export const HEAD_OF = `SELECT ${HEAD_ROW} AS head`;

/** How many delivered rows one move takes at most (one transaction). */
export const MOVE_BATCH = 5_000;

/**
 * Finds what is still owed and claims what this process can send now.
 *
 * 1. Credits owed time and prunes (one short write transaction).
 * 2. Reads the owed rows — through the partial indexes, so the cost follows the
 *    number of owed rows, not the table — outside any write lock.
 * 3. Judges each distinct owner once (liveness.ts); rows of live owners are
 *    theirs to finish, and rows this process holds are its own senders'.
 * 4. Abandons rows past the attempt cap or the stale cutoff, settles rows whose
 *    chunks were all delivered, and claims the head of each conversation's
 *    outbox whose platform is connected, in (conversation, sequence) order and
 *    in small write transactions. Each write is a compare-and-swap on the
 *    state, owner and fence read in step 2 (transitions.ts): if another sweeper
 *    claimed the row in between, it changes nothing and we skip it — so two
 *    sweepers can never both own one row, without holding a lock across the
 *    whole sweep. A row behind an owed one in its conversation waits: replies
 *    go out in order, and a retry holds the head of the line.
 */
export function sweepRecoverable(ctx: LedgerContext, params: SweepParams): SweepOutcome {
  const { db, policy } = ctx;
  const { now } = params;
  const me = ctx.instanceId();
  const { pruned, awake } = creditAndPrune(ctx, now, params.suspendedMs ?? 0, params.moveDelivered ?? false);

  // The instances first (a handful): whose rows are free to take. Rows of live
  // instances elsewhere are never read, however many they are sending.
  const judge = judgeContext(ctx, now);
  const deadOwners: string[] = [];
  const freeOwners = [me];
  for (const instance of listInstances(db)) {
    if (instance.id === me) continue;
    if (instance.stoppedAt !== null) {
      freeOwners.push(instance.id);
    } else if (!judgeOwner(instance, judge).alive) {
      freeOwners.push(instance.id);
      deadOwners.push(instance.id);
    }
  }
  if (params.checkOrphans) freeOwners.push(...orphanOwners(db));

  // Through the owed index, by owner: nobody's rows (released, failed and due
  // again), then the free owners'. A live sender's rows are never read.
  const candidates = [
    ...(cachedStatement(db, `SELECT ${CANDIDATE_COLUMNS} FROM ${OWED_ROWS} WHERE ${TAKEABLE} AND owner_instance IS NULL`).all({ now }) as Candidate[]),
    ...(cachedStatement(
      db,
      `SELECT ${CANDIDATE_COLUMNS} FROM ${OWED_ROWS} WHERE ${TAKEABLE} AND owner_instance IN (SELECT value FROM json_each(@owners))`,
    ).all({ now, owners: JSON.stringify(freeOwners) }) as Candidate[]),
  ];

  // The head of each conversation's outbox is its owed row with the lowest seq,
  // whoever holds it. Among the rows read, only each conversation's lowest can
  // be; whether a live instance's row (not read) comes before it is asked of the
  // outbox index, only for the rows this sweep would claim or count.
  const lowestRead = new Map<string, Candidate>();
  for (const row of candidates) {
    const lowest = lowestRead.get(row.session_key);
    if (!lowest || row.row < lowest.row) lowestRead.set(row.session_key, row);
  }
  const isHead = (row: Candidate): boolean => (cachedStatement(db, HEAD_OF).get({ session: row.session_key }) as { head: number | null }).head === row.row;

  const platforms = new Map(params.deliverablePlatforms.map((platform) => [platform.name, platform]));
  const limit = params.limit ?? policy.sweepLimit;
  const toClaim: Candidate[] = [];
  const toAbandon: { row: Candidate; reason: string }[] = [];
  const toSettle: Candidate[] = [];
  let waitingForPlatform = 0;
  for (const row of candidates) {
    if (ctx.holds(row.id)) continue;
    const end = verdictFor(row, awake, policy);
    if (end?.kind === 'settle') {
      toSettle.push(row);
    } else if (end?.kind === 'abandon') {
      toAbandon.push({ row, reason: end.reason });
    } else if (lowestRead.get(row.session_key) === row) {
      const platform = platforms.get(row.platform);
      if (!platform || !(platform.canSend?.({ chatId: row.chat_id, threadId: row.thread_id }) ?? true)) {
        if (isHead(row)) waitingForPlatform += 1;
      } else toClaim.push(row);
    }
  }
  toClaim.sort((a, b) => (a.session_key < b.session_key ? -1 : a.session_key > b.session_key ? 1 : a.row - b.row));

  if (deadOwners.length > 0) {
    db.transaction(() => deadOwners.forEach((owner) => declareDead(db, owner, now))).immediate();
  }

  let abandoned = 0;
  let lostRaces = 0;
  const write = (verb: 'claim' | 'settle' | 'abandon', row: Candidate, extra: Record<string, unknown> = {}) =>
    cachedStatement(db, obligationSql(verb)).run({
      row: row.row,
      now,
      me,
      readState: row.state,
      readOwner: row.owner_instance,
      readFence: row.fence,
      ...(verb === 'claim' ? { session: row.session_key } : {}),
      ...extra,
    }).changes === 1;
  const changedIds: string[] = [];
  const claimedRows: number[] = [];
  const inBatches = <T>(items: readonly T[], apply: (item: T) => boolean): void => {
    for (let start = 0; start < items.length; start += policy.claimBatchSize) {
      const batch = items.slice(start, start + policy.claimBatchSize);
      db.transaction(() => {
        for (const item of batch) if (!apply(item)) lostRaces += 1;
      }).immediate();
    }
  };
  inBatches(toAbandon, ({ row, reason }) => {
    const ok = write('abandon', row, { reason });
    if (ok) {
      abandoned += 1;
      changedIds.push(row.id);
    }
    return ok;
  });
  inBatches(toSettle, (row) => {
    const ok = write('settle', row);
    if (ok) changedIds.push(row.id);
    return ok;
  });
  // A head abandoned or settled just now frees its conversation; the next sweep
  // (or the conversation's own drain) takes the row behind it.
  const freed = new Set([...toAbandon.map(({ row }) => row.session_key), ...toSettle.map((row) => row.session_key)]);
  const heads: Candidate[] = [];
  for (const row of toClaim) {
    if (heads.length >= limit) break;
    if (!freed.has(row.session_key) && isHead(row)) heads.push(row);
  }
  inBatches(
    heads,
    (row) => {
      const ok = write('claim', row);
      if (ok) claimedRows.push(row.row);
      return ok;
    },
  );
  for (const id of changedIds) ctx.changed(id);

  const claimed = claimedRows.map((number) => {
    const row = loadRow(ctx.db, number)!;
    ctx.changed(row.id, row);
    return describeClaim(row, platforms);
  });
  return {
    claimed,
    lostRaces,
    report: { claimed: claimed.length, abandoned, pruned, waitingForPlatform, owed: ctx.owedCount() },
  };
}

/** What an owed row comes to instead of being sent: settled (every chunk confirmed) or abandoned (stale, attempt cap). */
export type Verdict = { readonly kind: 'settle' } | { readonly kind: 'abandon'; readonly reason: string };

/**
 * The one rule for rows that are done without another send, used by the sweep
 * and by a conversation's drain alike. `awake` is the awake clock's reading
 * (see creditAndPrune).
 */
export function verdictFor(
  row: Pick<ObligationSql, 'chunks_delivered' | 'chunk_count' | 'owed_since_awake' | 'attempts'>,
  awake: number,
  policy: LedgerPolicy,
): Verdict | undefined {
  if (row.chunks_delivered >= row.chunk_count) return { kind: 'settle' };
  if (awake - row.owed_since_awake >= policy.staleAfterMs) return { kind: 'abandon', reason: `stale: still owed after ${formatHours(policy.staleAfterMs)}` };
  if (row.attempts >= policy.maxAttempts) return { kind: 'abandon', reason: `attempt cap: ${row.attempts} failed attempts` };
  return undefined;
}

/** What judging an owner needs from this machine right now (liveness.ts). */
export function judgeContext(ctx: LedgerContext, now: number): JudgeContext {
  return {
    bootId: ctx.probe.bootId(),
    pidNamespace: ctx.probe.pidNamespace?.() ?? null,
    inspect: (pid) => ctx.probe.inspect(pid),
    now,
    leaseMs: ctx.policy.leaseMs,
  };
}

/** The awake clock's reading (time some gateway was sweeping), as of the last sweep. */
export function awakeNow(ctx: LedgerContext): number {
  return (cachedStatement(ctx.db, `SELECT value FROM ledger_meta WHERE key = 'awake_ms'`).get() as { value: number } | undefined)?.value ?? 0;
}

/**
 * Rows still owed (states.ts OWED): pending, attempting, or failed with a retry
 * scheduled. Counted on the owed index (no per-commit counter page: every
 * reply would write it), so it costs in proportion to what is owed.
 */
export function countOwed(db: Db): number {
  return (cachedStatement(db, `SELECT count(*) AS n FROM ${OWED_ROWS} WHERE ${OWED}`).get() as { n: number }).n;
}

/**
 * The owed count, counted again only when the ledger may have changed since:
 * a ledger on this connection changed a row (`changed`, called for every change,
 * before or at its commit), or another connection committed (SQLite's
 * data_version, which counts other connections' commits only — hence one of
 * these per connection, shared by every ledger on it). A sweep every few seconds
 * with 100 000 replies being sent by another live gateway then costs a pragma,
 * not a walk of 100 000 index entries. Never kept from inside a transaction
 * (it could roll back).
 */
export class OwedCount {
  private static readonly byConnection = new WeakMap<Db, OwedCount>();
  private kept: { n: number; dataVersion: number; changes: number } | undefined;
  private changes = 0;

  static of(db: Db): OwedCount {
    let count = OwedCount.byConnection.get(db);
    if (!count) OwedCount.byConnection.set(db, (count = new OwedCount(db)));
    return count;
  }

  private constructor(private readonly db: Db) {}

  /** A row changed on this connection (committed or about to be). */
  changed(): void {
    this.changes++;
  }

  read(): number {
    if (this.db.inTransaction) return countOwed(this.db);
    const dataVersion = this.db.pragma('data_version', { simple: true }) as number;
    const kept = this.kept;
    if (kept && kept.dataVersion === dataVersion && kept.changes === this.changes) return kept.n;
    const n = countOwed(this.db);
    this.kept = { n, dataVersion, changes: this.changes };
    return n;
  }
}

/**
 * Moves up to `limit` delivered rows from the outbox to the history, in the
 * caller's transaction, and says how many. The history numbers its rows itself
 * (a row's number orders a conversation only while it is in flight); a row
 * leaves the outbox only once the history holds its id.
 */
export function moveDelivered(db: LedgerContext['db'], limit = MOVE_BATCH): number {
  const { upto } = cachedStatement(db, MOVE_SQL.upto).get({ limit }) as { upto: number | null };
  if (upto === null) return 0;
  cachedStatement(db, MOVE_SQL.copy).run({ upto });
  return cachedStatement(db, MOVE_SQL.remove).run({ upto }).changes;
}

/**
 * The stale cutoff counts owed time on the ledger's awake clock, which only
 * runs while some gateway is sweeping: each sweep advances it by the time since
 * the previous sweep (by any process: both marks are shared and updated under
 * the write lock, so two sweepers never double-count), less the time the machine
 * was measured suspended meanwhile (`suspendedMs`; a stall of the event loop is
 * awake time and counts), capped at maxCreditMs. A longer gap — a sleep not
 * measured, Homing closed, the clock jumped forward — adds at most that cap,
 * and a clock set back adds nothing. So a row nobody had
 * the chance to send is never abandoned for time that passed while nobody could,
 * yet a row whose platform stays disconnected while the gateway runs does reach
 * the cutoff. Rows store the clock's reading when they became owed, so a sweep
 * writes one meta row, however many rows are owed.
 */
function creditAndPrune(ctx: LedgerContext, now: number, suspendedMs: number, move: boolean): { pruned: number; awake: number } {
  const { db, policy } = ctx;
  return db
    .transaction(() => {
      const last = db.prepare(`SELECT value FROM ledger_meta WHERE key = 'last_sweep_at'`).get() as
        | { value: number }
        | undefined;
      const credit = last ? Math.min(policy.maxCreditMs, Math.max(0, now - last.value - suspendedMs)) : 0;
      const awake = ((db.prepare(`SELECT value FROM ledger_meta WHERE key = 'awake_ms'`).get() as { value: number } | undefined)?.value ?? 0) + credit;
      const setMeta = db.prepare(
        `INSERT INTO ledger_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      );
      setMeta.run('last_sweep_at', now);
      setMeta.run('awake_ms', awake);
      if (move) moveDelivered(db);
      // Only delivered rows are pruned, from the history. Bounded per sweep so one
      // sweep never holds the lock for long.
      const pruned = db
        .prepare(
          `DELETE FROM ledger_history WHERE row IN (
             SELECT row FROM ledger_history INDEXED BY ledger_history_delivered WHERE delivered_at < ? LIMIT 1000)`,
        )
        .run(now - policy.retentionMs).changes;
      pruneInstances(db, now - policy.retentionMs);
      return { pruned, awake };
    })
    .immediate();
}

export function describeClaim(row: InsertedRow, platforms: ReadonlyMap<string, DeliverablePlatform>): ClaimedObligation {
  const chunks = chunksOf(row);
  // Settled rows never get here (every chunk delivered → 'settle'), so one is owed.
  const firstChunk = chunks.find((chunk) => chunk.state !== 'delivered') ?? chunks[chunks.length - 1]!;
  const mayHaveArrived = firstChunk.mayHaveArrived;
  return {
    id: row.id,
    receipt: { id: row.id, row: row.row, owner: row.owner_instance!, fence: row.fence },
    seq: row.row,
    recordedAt: row.created_at,
    sessionKey: row.session_key,
    target: { platform: row.platform, chatId: row.chat_id, threadId: row.thread_id, replyTo: row.reply_to },
    content: row.content,
    attempts: row.attempts,
    chunks,
    firstChunk,
    mayHaveArrived,
    needsMarker: mayHaveArrived && !(platforms.get(row.platform)?.serverIdempotency ?? false),
  };
}

function formatHours(ms: number): string {
  const hours = ms / 3_600_000;
  return hours >= 1 ? `${Number.isInteger(hours) ? hours : hours.toFixed(1)} h` : `${Math.round(ms / 60_000)} min`;
}
