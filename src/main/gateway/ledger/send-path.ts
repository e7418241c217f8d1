import type { DeliveryRow } from '../../../shared/api';
import { cachedStatement } from '../db/database';
import type { LedgerContext } from './context';
import { computeChunkKey } from './obligation-id';
import { retryDelayMs } from './policy';
import { loadObligation, toDeliveryRow } from './rows';
import type { ChunkState, ObligationState } from './states';

/** The awake clock's current reading (see sweep.ts), as an SQL expression. */
export const AWAKE_NOW = `COALESCE((SELECT value FROM ledger_meta WHERE key = 'awake_ms'), 0)`;

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
}

export type RecordResult = { readonly created: boolean; readonly row: DeliveryRow };

export type AttemptResult =
  | { readonly ok: true; readonly attempts: number }
  | { readonly ok: false; readonly reason: 'not-found' | 'not-owed' | 'owned-elsewhere'; readonly state?: ObligationState };

export type ChunkResult = { readonly ok: true } | { readonly ok: false; readonly reason: 'not-found' | 'no-change' };

export type DeliveredResult = { readonly ok: true } | { readonly ok: false; readonly reason: 'not-found' | 'already-delivered' };

export interface SendFailure {
  readonly error: string;
  readonly retryable: boolean;
  /** The platform's retry-after, when it gave one (rate limits). */
  readonly retryAfterMs?: number | undefined;
  /** The chat is gone or the bot is blocked: retrying cannot help. */
  readonly permanent: boolean;
}

export type FailedResult =
  | { readonly ok: true; readonly state: 'failed' | 'abandoned'; readonly nextAttemptAt: number | null }
  | { readonly ok: false; readonly reason: 'not-found' | 'not-attempting' };

/**
 * Records an owed reply, durably (the commit is fsynced) before anything is sent.
 * Idempotent: the id is derived from the turn and the content, so recording the
 * same reply again finds the existing row and changes nothing — in particular a
 * delivered row is never reset to pending. The new row is owned by this
 * instance, so a concurrent sweep elsewhere leaves it to the sender that is
 * about to send it.
 */
export function recordObligation(ctx: LedgerContext, input: RecordInput): RecordResult {
  const { db } = ctx;
  const now = ctx.clock.now();
  const chunks = input.chunks.length > 0 ? input.chunks : [input.content];
  const insertChunk = cachedStatement(db, 
    `INSERT INTO ledger_chunks (obligation_id, chunk_index, text, state, idempotency_key, updated_at)
     VALUES (?, ?, ?, 'owed', ?, ?)`,
  );
  const created = db
    .transaction(() => {
      const inserted = cachedStatement(db, 
          `INSERT INTO ledger_obligations
             (id, session_key, platform, chat_id, thread_id, reply_to, content, state, owner_instance,
              created_at, updated_at, chunk_count, owed_since_awake)
           VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ${AWAKE_NOW})
           ON CONFLICT (id) DO NOTHING`,
        )
        .run(
          input.obligationId,
          input.sessionKey,
          input.platform,
          input.chatId,
          input.threadId,
          input.replyTo,
          input.content,
          ctx.instanceId(),
          now,
          now,
          chunks.length,
        ).changes === 1;
      if (inserted) {
        chunks.forEach((text, index) => insertChunk.run(input.obligationId, index, text, computeChunkKey(input.obligationId, index), now));
      }
      return inserted;
    })
    .immediate();
  const row = loadObligation(db, input.obligationId);
  if (!row) throw new Error(`obligation ${input.obligationId} vanished right after it was recorded`);
  if (created) ctx.changed(input.obligationId, row);
  return { created, row: toDeliveryRow(row) };
}

/**
 * Starts an attempt on a row this instance recorded (or that nobody owns): a
 * compare-and-swap on state and owner that counts the attempt. A row another
 * instance owns is left to it; recovery from a dead owner goes through the sweep.
 */
export function markAttempting(ctx: LedgerContext, id: string): AttemptResult {
  const now = ctx.clock.now();
  const me = ctx.instanceId();
  const changed = cachedStatement(ctx.db, 
      `UPDATE ledger_obligations
         SET state = 'attempting', owner_instance = ?, attempts = attempts + 1,
             last_attempt_at = ?, updated_at = ?, next_attempt_at = NULL
       WHERE id = ? AND (state = 'pending' OR (state = 'failed' AND next_attempt_at IS NOT NULL))
         AND (owner_instance IS NULL OR owner_instance = ?) AND attempts < ?`,
    )
    .run(me, now, now, id, me, ctx.policy.maxAttempts).changes;
  const row = loadObligation(ctx.db, id);
  if (!row) return { ok: false, reason: 'not-found' };
  if (changed === 1) {
    ctx.changed(id, row);
    return { ok: true, attempts: row.attempts };
  }
  const owedElsewhere = (row.state === 'pending' || row.state === 'attempting') && row.owner_instance !== me;
  return { ok: false, reason: owedElsewhere ? 'owned-elsewhere' : 'not-owed', state: row.state };
}

/**
 * Written just before a chunk is handed to a platform without server-side
 * idempotency: if this process dies before the outcome is recorded, the chunk
 * may have arrived, and its resend must carry the marker.
 */
export function markChunkSending(ctx: LedgerContext, id: string, chunkIndex: number): ChunkResult {
  return moveChunk(ctx, id, chunkIndex, 'owed', 'sending');
}

/** The platform refused the chunk outright: it did not arrive, so a resend needs no marker. */
export function markChunkUnsent(ctx: LedgerContext, id: string, chunkIndex: number): ChunkResult {
  return moveChunk(ctx, id, chunkIndex, 'sending', 'owed');
}

function moveChunk(ctx: LedgerContext, id: string, chunkIndex: number, from: ChunkState, to: ChunkState): ChunkResult {
  const changes = cachedStatement(
    ctx.db,
    `UPDATE ledger_chunks SET state = ?, updated_at = ?
     WHERE obligation_id = ? AND chunk_index = ? AND state = ?`,
  ).run(to, ctx.clock.now(), id, chunkIndex, from).changes;
  return changes === 1 ? { ok: true } : chunkMiss(ctx, id, chunkIndex);
}

/** The platform confirmed the chunk: it is never sent again. */
export function markChunkDelivered(ctx: LedgerContext, id: string, chunkIndex: number, platformMessageId: string): ChunkResult {
  const { db } = ctx;
  const now = ctx.clock.now();
  const changed = db
    .transaction(() => {
      const changes = cachedStatement(db, 
          `UPDATE ledger_chunks SET state = 'delivered', platform_message_id = ?, updated_at = ?
           WHERE obligation_id = ? AND chunk_index = ? AND state != 'delivered'`,
        )
        .run(platformMessageId, now, id, chunkIndex).changes;
      if (changes === 1) {
        cachedStatement(db, 
          'UPDATE ledger_obligations SET chunks_delivered = chunks_delivered + 1, updated_at = ? WHERE id = ?',
        ).run(now, id);
      }
      return changes === 1;
    })
    .immediate();
  if (!changed) return chunkMiss(ctx, id, chunkIndex);
  ctx.changed(id);
  return { ok: true };
}

/**
 * Every chunk arrived. Allowed from any state but delivered — even abandoned
 * (discarded while it was being sent): the ledger records what happened.
 */
export function markDelivered(ctx: LedgerContext, id: string): DeliveredResult {
  const { db } = ctx;
  const now = ctx.clock.now();
  const changed = db
    .transaction(() => {
      const changes = cachedStatement(db, 
          `UPDATE ledger_obligations
             SET state = 'delivered', delivered_at = ?, updated_at = ?, next_attempt_at = NULL,
                 chunks_delivered = chunk_count
           WHERE id = ? AND state != 'delivered'`,
        )
        .run(now, now, id).changes;
      if (changes === 1) {
        cachedStatement(db, 
          `UPDATE ledger_chunks SET state = 'delivered', updated_at = ? WHERE obligation_id = ? AND state != 'delivered'`,
        ).run(now, id);
      }
      return changes === 1;
    })
    .immediate();
  if (changed) {
    ctx.changed(id);
    return { ok: true };
  }
  return { ok: false, reason: loadObligation(db, id) ? 'already-delivered' : 'not-found' };
}

/**
 * The attempt failed. Permanent or non-retryable errors fail the row for good
 * (no next attempt); retryable ones schedule the next attempt with exponential
 * backoff, never sooner than the platform's retry-after — or abandon the row
 * once the attempt cap is spent. Guarded on this instance's ownership, so a
 * sender that lost its row to a sweep cannot overwrite the new owner's state.
 */
export function markFailed(ctx: LedgerContext, id: string, failure: SendFailure): FailedResult {
  const { db, policy } = ctx;
  const now = ctx.clock.now();
  const me = ctx.instanceId();
  const row = loadObligation(db, id);
  if (!row) return { ok: false, reason: 'not-found' };
  if (row.state !== 'attempting' || row.owner_instance !== me) return { ok: false, reason: 'not-attempting' };

  let state: 'failed' | 'abandoned';
  let nextAttemptAt: number | null = null;
  let reason: string | null = null;
  if (failure.permanent || !failure.retryable) {
    state = 'failed';
  } else if (row.attempts >= policy.maxAttempts) {
    state = 'abandoned';
    reason = `gave up after ${row.attempts} attempts`;
  } else {
    state = 'failed';
    nextAttemptAt = now + retryDelayMs(policy, row.attempts, failure.retryAfterMs);
  }
  const lastError = failure.permanent ? `permanent: ${failure.error}` : failure.error;
  const changes = cachedStatement(db, 
      `UPDATE ledger_obligations
         SET state = ?, next_attempt_at = ?, last_error = ?, abandon_reason = ?, updated_at = ?
       WHERE id = ? AND state = 'attempting' AND owner_instance = ? AND attempts = ?`,
    )
    .run(state, nextAttemptAt, lastError, reason, now, id, me, row.attempts).changes;
  if (changes !== 1) return { ok: false, reason: 'not-attempting' };
  ctx.changed(id);
  return { ok: true, state, nextAttemptAt };
}

function chunkMiss(ctx: LedgerContext, id: string, chunkIndex: number): ChunkResult {
  const exists = cachedStatement(ctx.db, 'SELECT 1 FROM ledger_chunks WHERE obligation_id = ? AND chunk_index = ?')
    .get(id, chunkIndex);
  return { ok: false, reason: exists ? 'no-change' : 'not-found' };
}
