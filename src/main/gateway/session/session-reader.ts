import { join } from 'node:path';
import type { SessionPage, SessionSummary, TranscriptMessage, TranscriptPage } from '../../../shared/api';
import { decodeCursor, encodeCursor } from '../../../shared/page-cursor';
import type { Db } from '../db/database';
import { resolveInside } from './path-safety';
import { isSessionId } from './session-id';
import { SessionIndex } from './session-index';
import { readContext, readTurnPage, readTurnPageSliced, type ContextLimits, type LoadedContext } from './transcript-reader';
import type { SummaryTurn, Turn } from './transcript-record';

export const SESSIONS_DIR = 'sessions';
export const TRANSCRIPT_SUFFIX = '.jsonl';
export const DEFAULT_LIST_PAGE_SIZE = 50;
export const DEFAULT_TRANSCRIPT_PAGE_SIZE = 100;

export class SessionNotFoundError extends Error {
  override readonly name = 'SessionNotFoundError';
}

/** A cursor the caller made up or mangled; the API refuses it before it gets here (bad-request). */
export class BadSessionCursorError extends Error {
  override readonly name = 'BadSessionCursorError';
}

/**
 * Read-only access to sessions: what the window's API and the CLI use. It
 * never writes a transcript, not even to repair a torn tail, because it may
 * run beside a gateway that is in the middle of an append.
 */
export class SessionReader {
  readonly sessionsDir: string;
  protected readonly index: SessionIndex;

  constructor(db: Db, dataDir: string) {
    this.sessionsDir = join(dataDir, SESSIONS_DIR);
    this.index = new SessionIndex(db);
  }

  /** `sessions/<id>.jsonl`; throws UnsafePathError for anything that is not a plain name inside `sessions/`. */
  transcriptPath(sessionId: string): string {
    return resolveInside(this.sessionsDir, sessionId, TRANSCRIPT_SUFFIX);
  }

  get(sessionId: string): SessionSummary | undefined {
    return isSessionId(sessionId) ? this.index.get(sessionId) : undefined;
  }

  /** A session id, or a session key (its current session). */
  find(keyOrId: string): SessionSummary | undefined {
    return this.get(keyOrId) ?? this.index.current(keyOrId);
  }

  /** Every session its key has had, newest first. */
  history(sessionKey: string): SessionSummary[] {
    return this.index.history(sessionKey);
  }

  /**
   * Newest activity first. `cursor` (a page's `nextCursor`) reads the page after
   * it by an index seek; `page` (1-based, an OFFSET) is for old callers.
   * Throws BadSessionCursorError for a cursor that no page made.
   */
  list(options: { cursor?: string; page?: number; pageSize?: number } = {}): SessionPage {
    const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
    if (options.cursor !== undefined && !after) throw new BadSessionCursorError('not a cursor from a previous page of sessions');
    if (after && options.page !== undefined) throw new BadSessionCursorError('give a cursor or a page, not both');
    const page = after?.page ?? options.page ?? 1;
    const pageSize = options.pageSize ?? DEFAULT_LIST_PAGE_SIZE;
    // One more than a page tells whether another page exists.
    const { sessions, total } = this.index.list(after ? { updatedAt: after.at, sessionId: after.id } : (page - 1) * pageSize, pageSize + 1);
    const shown = sessions.slice(0, pageSize);
    const last = shown.at(-1);
    const nextCursor = sessions.length > pageSize && last ? encodeCursor({ at: last.updatedAt, id: last.sessionId, page: page + 1 }) : null;
    return { sessions: shown, page, pageSize, total, nextCursor };
  }

  /** Page `page` (1-based, oldest first) of a transcript. */
  transcript(sessionId: string, options: { page?: number; pageSize?: number } = {}): TranscriptPage {
    const { session, page, pageSize } = this.pageOf(sessionId, options);
    return transcriptPage(session, page, pageSize, readTurnPage(this.transcriptPath(session.sessionId), page - 1, pageSize));
  }

  /** `transcript`, read in slices that yield to the event loop: what the API serves (a page can be megabytes). */
  async transcriptSliced(sessionId: string, options: { page?: number; pageSize?: number } = {}): Promise<TranscriptPage> {
    const { session, page, pageSize } = this.pageOf(sessionId, options);
    return transcriptPage(session, page, pageSize, await readTurnPageSliced(this.transcriptPath(session.sessionId), page - 1, pageSize));
  }

  private pageOf(sessionId: string, options: { page?: number; pageSize?: number }): { session: SessionSummary; page: number; pageSize: number } {
    const session = this.get(sessionId);
    if (!session) throw new SessionNotFoundError(`no session ${JSON.stringify(sessionId.slice(0, 80))}`);
    return { session, page: options.page ?? 1, pageSize: options.pageSize ?? DEFAULT_TRANSCRIPT_PAGE_SIZE };
  }

  /** The last turns, as they are on disk now (a torn tail is skipped, not repaired). */
  readContext(sessionId: string, limits?: ContextLimits): LoadedContext {
    return readContext(this.transcriptPath(sessionId), limits);
  }
}

export function toMessage(turn: Turn | SummaryTurn): TranscriptMessage {
  if (turn.type === 'summary') {
    return { role: 'summary', at: turn.at, covers: turn.covers, ...(turn.cut ? { cut: turn.cut } : {}), ...(turn.trimmed ? { trimmed: true } : {}), text: turn.text };
  }
  return turn.type === 'user'
    ? {
        role: 'user',
        at: turn.at,
        messageRef: turn.messageRef ?? null,
        sender: { pseudonym: turn.sender.id, name: turn.sender.name ?? null },
        ...(turn.scheduled ? { scheduled: turn.scheduled } : {}),
        text: turn.text,
        ...(turn.media && turn.media.length > 0
          ? {
              // Never the platform's locator: the window needs what the file is, not where it came from.
              media: turn.media.map((ref) => ({
                id: ref.id,
                kind: ref.kind,
                name: ref.name ?? null,
                mime: ref.mime ?? null,
                size: ref.size ?? null,
                durationS: ref.durationS ?? null,
                state: 'pending' as const,
                transcript: null,
                error: null,
              })),
            }
          : {}),
      }
    : { role: 'assistant', at: turn.at, obligationId: turn.obligationId, text: turn.text };
}

function transcriptPage(session: SessionSummary, page: number, pageSize: number, read: { turns: readonly (Turn | SummaryTurn)[]; totalTurns: number }): TranscriptPage {
  return {
    session,
    messages: read.turns.map(toMessage),
    page,
    pageSize,
    pageCount: Math.max(1, Math.ceil(read.totalTurns / pageSize)),
    totalMessages: read.totalTurns,
  };
}
