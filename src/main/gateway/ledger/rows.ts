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

/**
 * One line of at most PREVIEW_CHARS characters (code points, so an emoji is never
 * cut in half): keeps a page of 50 rows small however long the replies are.
 */
export function previewOf(content: string): string {
  const flat = content.slice(0, PREVIEW_CHARS * 4).replace(/\s+/g, ' ').trim();
  const chars = [...flat];
  return chars.length > PREVIEW_CHARS ? `${chars.slice(0, PREVIEW_CHARS - 1).join('')}…` : flat;
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

export function loadChunks(db: Db, id: string): Chunk[] {
  return (
    cachedStatement(db, 'SELECT * FROM ledger_chunks WHERE obligation_id = ? ORDER BY chunk_index').all(id) as ChunkSql[]
  ).map(toChunk);
}
