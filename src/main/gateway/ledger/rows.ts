import type { DeliveryRow } from '../../../shared/api';
import { cachedStatement, type Db } from '../db/database';
import { computeChunkKey } from './obligation-id';
import { decodeParts } from './parts';
import type { ChunkState, ObligationState } from './states';

/** A reply's row (ledger_outbox, or ledger_history once delivered) as SQLite returns it. */
export interface ObligationSql {
  /** Its place in the ledger, and so in its conversation's order (1, 2, …): what a claim's receipt names it by. */
  row: number;
  id: string;
  session_key: string;
  platform: string;
  chat_id: string;
  thread_id: string | null;
  reply_to: string | null;
  content: string;
  /** Its parts, stored as slices of `content` (parts.ts); null: one part, the content. */
  parts: string | null;
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
  /** Parts confirmed by the platform: always the first ones (parts go out in order). */
  chunks_delivered: number;
  /** The next part was handed to the platform and its outcome not seen yet (1) or not (0). */
  part_sending: number;
  /** The next part may have arrived (sticky until it is confirmed): a resend carries the marker. */
  part_maybe: number;
  /** Bumped by every claim and retry: a receipt presents the fence it was given. */
  fence: number;
  message_ref: string | null;
}

/**
 * A reply's row as the ledger knows it without reading it back: every column
 * but the awake clock's reading, which SQLite fills in when the row is
 * recorded (transitions.ts RECORD_SQL) and only the sweep reads.
 */
export type InsertedRow = Omit<ObligationSql, 'owed_since_awake'>;

/** Every column of a reply's row but its number, in the tables' order (ledger-009). */
export const REPLY_COLUMNS = `id, session_key, message_ref, platform, chat_id, thread_id, reply_to, content, parts, state, attempts, owner_instance,
  fence, created_at, updated_at, last_attempt_at, next_attempt_at, delivered_at, owed_since_awake, last_error, abandon_reason,
  chunk_count, chunks_delivered, part_sending, part_maybe`;

/** One chunk of a reply, as the delivery loop needs it. */
export interface Chunk {
  readonly index: number;
  readonly text: string;
  readonly state: ChunkState;
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

export function toDeliveryRow(row: InsertedRow): DeliveryRow {
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

/** A reply's parts as the delivery loop sees them, derived from its row. */
export function chunksOf(row: Pick<ObligationSql, 'id' | 'content' | 'parts' | 'chunks_delivered' | 'part_sending' | 'part_maybe' | 'state'>): Chunk[] {
  const next = row.chunks_delivered;
  return decodeParts(row.content, row.parts).map((text, index): Chunk => {
    const settled = row.state === 'delivered' || index < next;
    const sending = !settled && index === next && row.part_sending === 1;
    return {
      index,
      text,
      state: settled ? 'delivered' : sending ? 'sending' : 'owed',
      idempotencyKey: computeChunkKey(row.id, index),
      mayHaveArrived: !settled && index === next && (row.part_maybe === 1 || sending),
    };
  });
}

/** The outbox, then the history: a reply by its id (both tables index it). */
export function loadObligation(db: Db, id: string): ObligationSql | undefined {
  return (cachedStatement(db, 'SELECT * FROM ledger_outbox WHERE id = ?').get(id) ??
    cachedStatement(db, 'SELECT * FROM ledger_history WHERE id = ?').get(id)) as ObligationSql | undefined;
}

/** The outbox row number of the reply `id`, or undefined when it is not in the outbox (delivered and moved, or unknown). */
export function outboxRowOf(db: Db, id: string): number | undefined {
  return (cachedStatement(db, 'SELECT row FROM ledger_outbox WHERE id = ?').get(id) as { row: number } | undefined)?.row;
}

/** A row of the outbox by its number (a receipt's). */
export function loadRow(db: Db, row: number): ObligationSql | undefined {
  return cachedStatement(db, 'SELECT * FROM ledger_outbox WHERE row = ?').get(row) as ObligationSql | undefined;
}
