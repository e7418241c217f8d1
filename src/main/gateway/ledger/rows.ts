import type { DeliveryRow } from '../../../shared/api';
import { cachedStatement, type Db } from '../db/database';
import type { ChunkState, ObligationState } from './states';

/** An obligation row as SQLite returns it. */
export interface ObligationSql {
  id: string;
  session_key: string;
  platform: string;
  chat_id: string;
  thread_id: string | null;
  reply_to: string | null;
  content: string;
  state: ObligationState;
  attempts: number;
  owner_instance: string | null;
  created_at: number;
  updated_at: number;
  last_attempt_at: number | null;
  next_attempt_at: number | null;
  delivered_at: number | null;
  owed_since_awake: number;
  last_error: string | null;
  abandon_reason: string | null;
  chunk_count: number;
  chunks_delivered: number;
  /** The reply's place in its conversation's outbox (1, 2, …). */
  seq: number;
  /** Bumped by every claim and retry: a receipt presents the fence it was given. */
  fence: number;
  message_ref: string | null;
}

export interface ChunkSql {
  obligation_id: string;
  chunk_index: number;
  text: string;
  state: ChunkState;
  platform_message_id: string | null;
  idempotency_key: string;
  updated_at: number;
  may_have_arrived: number;
}

/** One chunk of a reply, as the delivery loop needs it. */
export interface Chunk {
  readonly index: number;
  readonly text: string;
  readonly state: ChunkState;
  readonly platformMessageId: string | null;
  readonly idempotencyKey: string;
  /** A send of it began and its outcome was never seen: a resend carries the marker. Sticky. */
  readonly mayHaveArrived: boolean;
}

/** Where a reply goes. */
export interface DeliveryTarget {
  readonly platform: string;
  readonly chatId: string;
  readonly threadId: string | null;
  /** The platform's id of the message being answered, when the reply quotes it. */
  readonly replyTo: string | null;
}

export function toDeliveryRow(row: ObligationSql): DeliveryRow {
  return {
    id: row.id,
    state: row.state,
    platform: row.platform,
    chatId: row.chat_id,
    threadId: row.thread_id,
    sessionKey: row.session_key,
    attempts: row.attempts,
    chunksDelivered: row.chunks_delivered,
    chunksTotal: row.chunk_count,
    lastError: row.last_error,
    abandonReason: row.abandon_reason,
    nextAttemptAt: row.next_attempt_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    preview: previewOf(row.content),
  };
}

export const PREVIEW_CHARS = 120;

/** Whitespace a preview folds into one space: a run, or any whitespace but a space. */
const FOLDABLE = /\s\s|[^\S ]/;

/**
 * One line of at most PREVIEW_CHARS characters (code points, so an emoji is never
 * cut in half): keeps a page of 50 rows small however long the replies are.
 */
export function previewOf(content: string): string {
  const head = content.slice(0, PREVIEW_CHARS * 4);
  // Most replies have single spaces only: nothing to fold (replace builds a new string a run).
  const flat = (FOLDABLE.test(head) ? head.replace(/\s+/g, ' ') : head).trim();
  // No more UTF-16 units than characters allowed: no more code points either (every change event builds one).
  if (flat.length <= PREVIEW_CHARS) return flat;
  let at = 0;
  let cut = 0;
  for (let count = 1; count <= PREVIEW_CHARS; count++) {
    if (at >= flat.length) return flat;
    at += (flat.codePointAt(at) ?? 0) > 0xffff ? 2 : 1;
    if (count === PREVIEW_CHARS - 1) cut = at;
  }
  return at < flat.length ? `${flat.slice(0, cut)}…` : flat;
}

export function toChunk(row: ChunkSql): Chunk {
  return {
    index: row.chunk_index,
    text: row.text,
    state: row.state,
    platformMessageId: row.platform_message_id,
    idempotencyKey: row.idempotency_key,
    mayHaveArrived: row.may_have_arrived === 1 || row.state === 'sending',
  };
}

export function loadObligation(db: Db, id: string): ObligationSql | undefined {
  return cachedStatement(db, 'SELECT * FROM ledger_obligations WHERE id = ?').get(id) as ObligationSql | undefined;
}

/**
 * What a chunk row stores as its text: nothing when the reply is that one chunk
 * (its text is the row's content, stored once), else the chunk's own text.
 */
export function storedChunkText(text: string, content: string, chunkCount: number): string {
  return chunkCount === 1 && text === content ? '' : text;
}

export function loadChunks(db: Db, id: string): Chunk[] {
  return (
    cachedStatement(
      db,
      `SELECT c.obligation_id, c.chunk_index, c.state, c.platform_message_id, c.idempotency_key, c.updated_at, c.may_have_arrived,
              CASE WHEN c.text = '' AND o.chunk_count = 1 THEN o.content ELSE c.text END AS text
       FROM ledger_chunks c JOIN ledger_obligations o ON o.id = c.obligation_id
       WHERE c.obligation_id = ? ORDER BY c.chunk_index`,
    ).all(id) as ChunkSql[]
  ).map(toChunk);
}
