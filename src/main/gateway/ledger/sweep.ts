import type { SweepReport } from '../../../shared/api';
import type { LedgerContext } from './context';
import { declareDead, loadInstance, pruneInstances } from './instances';
import { judgeOwner } from './liveness';
import { loadChunks, loadObligation, type Chunk, type DeliveryTarget, type ObligationSql } from './rows';

/** A platform connected in this process, and whether its server deduplicates resends. */
export interface DeliverablePlatform {
  readonly name: string;
  /** Matrix txnId, Discord nonce: a resend with the same key cannot appear twice. */
  readonly serverIdempotency: boolean;
}

export interface SweepParams {
  readonly now: number;
  readonly deliverablePlatforms: readonly DeliverablePlatform[];
  /** Claim at most this many rows (default: the policy's sweepLimit). */
  readonly limit?: number;
}

/** A row this process has just claimed: it now owns sending it. */
export interface ClaimedObligation {
  readonly id: string;
  readonly sessionKey: string;
  readonly target: DeliveryTarget;
  readonly content: string;
  /** Attempts including this one. */
  readonly attempts: number;
  readonly chunks: readonly Chunk[];
  /** The first chunk not known delivered: sending resumes here. */
  readonly firstChunk: Chunk;
  /** That chunk was being sent when its sender stopped: it may have arrived. */
  readonly mayHaveArrived: boolean;
  /** It may have arrived and the platform cannot deduplicate: prefix the marker. */
  readonly needsMarker: boolean;
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
  'id' | 'state' | 'owner_instance' | 'attempts' | 'platform' | 'owed_since_awake' | 'next_attempt_at' | 'chunk_count' | 'chunks_delivered'
>;

type Decision =
  | { kind: 'claim'; row: Candidate }
  | { kind: 'abandon'; row: Candidate; reason: string }
  | { kind: 'settle'; row: Candidate }
  | { kind: 'wait-for-platform' }
  | { kind: 'leave' };

/**
 * The sweep names its partial indexes (INDEXED BY): the planner would otherwise
 * be free to pick the listing index (state, created_at), which for the prune
 * walks every delivered row. With INDEXED BY a query that cannot use its index
 * fails loudly instead of silently scanning a million rows.
 */
const UNSETTLED = 'ledger_obligations INDEXED BY ledger_obligations_unsettled';
const RETRYING = 'ledger_obligations INDEXED BY ledger_obligations_retry';
const DELIVERED = 'ledger_obligations INDEXED BY ledger_obligations_delivered';

const CANDIDATE_COLUMNS =
  'id, state, owner_instance, attempts, platform, owed_since_awake, next_attempt_at, chunk_count, chunks_delivered';

/**
 * Finds what is still owed and claims what this process can send now.
 *
 * 1. Credits owed time and prunes (one short write transaction).
 * 2. Reads the owed rows — through the partial indexes, so the cost follows the
 *    number of owed rows, not the table — outside any write lock.
 * 3. Judges each distinct owner once (liveness.ts); rows of live owners are
 *    theirs to finish.
 * 4. Abandons rows past the attempt cap or the stale cutoff, and claims the rest
 *    whose platform is connected, in small write transactions. Each claim is a
 *    compare-and-swap guarded on the state, owner and attempt count read in
 *    step 2: if another sweeper (another process on the same database) claimed
 *    the row in between, the guard no longer matches and we skip it — so two
 *    sweepers can never both own one row, without holding a lock across the
 *    whole sweep.
 */
export function sweepRecoverable(ctx: LedgerContext, params: SweepParams): SweepOutcome {
  const { db, policy } = ctx;
  const { now } = params;
  const me = ctx.instanceId();
  const { pruned, awake } = creditAndPrune(ctx, now);
  const owedFor = (row: Candidate) => awake - row.owed_since_awake;

  // Our own attempting rows are being sent by this process right now. Our own
  // pending rows are not: the delivery loop records and starts its attempt with
  // no await in between, so a pending row of ours was left for the sweep (its
  // platform was not connected, or the ledger failed to start the attempt).
  const unsettled = (
    db
      .prepare(`SELECT ${CANDIDATE_COLUMNS} FROM ${UNSETTLED} WHERE state IN ('pending', 'attempting')`)
      .all() as Candidate[]
  ).filter((row) => !(row.state === 'attempting' && row.owner_instance === me));
  const retrying = db
    .prepare(
      `SELECT ${CANDIDATE_COLUMNS} FROM ${RETRYING} WHERE state = 'failed' AND next_attempt_at IS NOT NULL`,
    )
    .all() as Candidate[];

  const bootId = ctx.probe.bootId();
  const inspect = (pid: number) => ctx.probe.inspect(pid);
  const ownerAlive = new Map<string, boolean>();
  const deadOwners: string[] = [];
  for (const owner of new Set(unsettled.map((row) => row.owner_instance))) {
    if (owner === null || owner === me) continue;
    const verdict = judgeOwner(loadInstance(db, owner), { bootId, inspect, now, leaseMs: policy.leaseMs });
    ownerAlive.set(owner, verdict.alive);
    if (!verdict.alive) deadOwners.push(owner);
  }

  const platforms = new Map(params.deliverablePlatforms.map((platform) => [platform.name, platform]));
  const limit = params.limit ?? policy.sweepLimit;
  const decide = (row: Candidate, available: boolean): Decision => {
    if (!available) return { kind: 'leave' };
    if (row.chunks_delivered >= row.chunk_count) return { kind: 'settle', row };
    if (owedFor(row) >= policy.staleAfterMs) {
      return { kind: 'abandon', row, reason: `stale: still owed after ${formatHours(policy.staleAfterMs)}` };
    }
    if (row.attempts >= policy.maxAttempts) {
      return { kind: 'abandon', row, reason: `attempt cap: ${row.attempts} attempts made` };
    }
    if (!platforms.has(row.platform)) return { kind: 'wait-for-platform' };
    return { kind: 'claim', row };
  };
  const decisions = [
    ...unsettled.map((row) =>
      decide(row, row.owner_instance === null || row.owner_instance === me || ownerAlive.get(row.owner_instance) === false),
    ),
    // A failed row is not in flight: anyone may retry it once it is due; the
    // stale cutoff applies while it waits.
    ...retrying.map((row) =>
      decide(row, (row.next_attempt_at ?? Infinity) <= now || owedFor(row) >= policy.staleAfterMs),
    ),
  ];

  if (deadOwners.length > 0) {
    db.transaction(() => deadOwners.forEach((owner) => declareDead(db, owner, now))).immediate();
  }

  let abandoned = 0;
  let waitingForPlatform = 0;
  let lostRaces = 0;
  const toClaim: Candidate[] = [];
  const toAbandon: { row: Candidate; reason: string }[] = [];
  const toSettle: Candidate[] = [];
  for (const decision of decisions) {
    switch (decision.kind) {
      case 'claim':
        if (toClaim.length < limit) toClaim.push(decision.row);
        break;
      case 'abandon':
        toAbandon.push(decision);
        break;
      case 'settle':
        toSettle.push(decision.row);
        break;
      case 'wait-for-platform':
        waitingForPlatform += 1;
        break;
      case 'leave':
        break;
    }
  }

  const guard = 'id = ? AND state = ? AND owner_instance IS ? AND attempts = ?';
  const abandonStmt = db.prepare(
    `UPDATE ledger_obligations SET state = 'abandoned', abandon_reason = ?, next_attempt_at = NULL, updated_at = ?
     WHERE ${guard}`,
  );
  const settleStmt = db.prepare(
    `UPDATE ledger_obligations SET state = 'delivered', delivered_at = ?, updated_at = ?, next_attempt_at = NULL
     WHERE ${guard}`,
  );
  const claimStmt = db.prepare(
    `UPDATE ledger_obligations
       SET state = 'attempting', owner_instance = ?, attempts = attempts + 1,
           last_attempt_at = ?, updated_at = ?, next_attempt_at = NULL
     WHERE ${guard}`,
  );
  const changedIds: string[] = [];
  const claimedIds: string[] = [];
  const inBatches = <T>(items: readonly T[], write: (item: T) => boolean): void => {
    for (let start = 0; start < items.length; start += policy.claimBatchSize) {
      const batch = items.slice(start, start + policy.claimBatchSize);
      db.transaction(() => {
        for (const item of batch) {
          if (!write(item)) lostRaces += 1;
        }
      }).immediate();
    }
  };
  const guardArgs = (row: Candidate) => [row.id, row.state, row.owner_instance, row.attempts] as const;
  inBatches(toAbandon, ({ row, reason }) => {
    const ok = abandonStmt.run(reason, now, ...guardArgs(row)).changes === 1;
    if (ok) {
      abandoned += 1;
      changedIds.push(row.id);
    }
    return ok;
  });
  inBatches(toSettle, (row) => {
    const ok = settleStmt.run(now, now, ...guardArgs(row)).changes === 1;
    if (ok) changedIds.push(row.id);
    return ok;
  });
  inBatches(toClaim, (row) => {
    const ok = claimStmt.run(me, now, now, ...guardArgs(row)).changes === 1;
    if (ok) claimedIds.push(row.id);
    return ok;
  });
  for (const id of changedIds) ctx.changed(id);

  const claimed = claimedIds.map((id) => {
    const row = loadObligation(ctx.db, id)!;
    ctx.changed(id, row);
    return describeClaim(row, loadChunks(ctx.db, id), platforms);
  });
  return {
    claimed,
    lostRaces,
    report: { claimed: claimed.length, abandoned, pruned, waitingForPlatform, owed: countOwed(ctx) },
  };
}

/** Rows still owed: pending, attempting, or failed with a retry scheduled. */
export function countOwed(ctx: LedgerContext): number {
  const unsettled = ctx.db
    .prepare(`SELECT count(*) AS n FROM ${UNSETTLED} WHERE state IN ('pending', 'attempting')`)
    .get() as { n: number };
  const retrying = ctx.db
    .prepare(`SELECT count(*) AS n FROM ${RETRYING} WHERE state = 'failed' AND next_attempt_at IS NOT NULL`)
    .get() as { n: number };
  return unsettled.n + retrying.n;
}

/**
 * The stale cutoff counts owed time on the ledger's awake clock, which only
 * runs while some gateway is sweeping: each sweep advances it by the time since
 * the previous sweep (by any process: both marks are shared and updated under
 * the write lock, so two sweepers never double-count), capped at maxCreditMs. A
 * longer gap — the laptop slept, Homing was closed, the clock jumped forward —
 * adds at most that cap, and a clock set back adds nothing. So a row nobody had
 * the chance to send is never abandoned for time that passed while nobody could,
 * yet a row whose platform stays disconnected while the gateway runs does reach
 * the cutoff. Rows store the clock's reading when they became owed, so a sweep
 * writes one meta row, however many rows are owed.
 */
function creditAndPrune(ctx: LedgerContext, now: number): { pruned: number; awake: number } {
  const { db, policy } = ctx;
  return db
    .transaction(() => {
      const last = db.prepare(`SELECT value FROM ledger_meta WHERE key = 'last_sweep_at'`).get() as
        | { value: number }
        | undefined;
      const credit = last ? Math.min(policy.maxCreditMs, Math.max(0, now - last.value)) : 0;
      const awake = ((db.prepare(`SELECT value FROM ledger_meta WHERE key = 'awake_ms'`).get() as { value: number } | undefined)?.value ?? 0) + credit;
      const setMeta = db.prepare(
        `INSERT INTO ledger_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      );
      setMeta.run('last_sweep_at', now);
      setMeta.run('awake_ms', awake);
      // Only delivered rows are pruned; the ON DELETE CASCADE takes their chunks.
      // Bounded per sweep so one sweep never holds the lock for long.
      const pruned = db
        .prepare(
          `DELETE FROM ledger_obligations WHERE id IN (
             SELECT id FROM ${DELIVERED} WHERE state = 'delivered' AND delivered_at < ? LIMIT 1000)`,
        )
        .run(now - policy.retentionMs).changes;
      pruneInstances(db, now - policy.retentionMs);
      return { pruned, awake };
    })
    .immediate();
}

function describeClaim(row: ObligationSql, chunks: Chunk[], platforms: ReadonlyMap<string, DeliverablePlatform>): ClaimedObligation {
  // Settled rows never get here (every chunk delivered → 'settle'), so one is owed.
  const firstChunk = chunks.find((chunk) => chunk.state !== 'delivered') ?? chunks[chunks.length - 1]!;
  const mayHaveArrived = firstChunk.state === 'sending';
  return {
    id: row.id,
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
