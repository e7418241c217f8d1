import type { SessionSummary } from '../../../shared/api';
import { durably, type Db } from '../db/database';
import type { ResetReason } from './continuation';
import type { ChatType } from './source';

/** The raw ids needed to reply in a session's chat. Kept in the index only, never shown. */
export interface DeliveryAddress {
  readonly platform: string;
  readonly chatId: string;
  readonly chatType: ChatType;
  readonly threadId?: string;
}

export interface NewSessionRow {
  readonly sessionId: string;
  readonly sessionKey: string;
  readonly platform: string;
  readonly chatType: ChatType;
  readonly chat: string;
  readonly address: DeliveryAddress;
  readonly title: string | null;
  readonly createdAt: number;
}

interface Row {
  session_id: string;
  session_key: string;
  platform: string;
  chat_type: ChatType;
  chat_pseudonym: string;
  address: string;
  title: string | null;
  created_at: number;
  updated_at: number;
  last_message_at: number | null;
  user_message_count: number;
  assistant_message_count: number;
  last_message_preview: string | null;
  ended_at: number | null;
  end_reason: ResetReason | null;
  current: number;
}

const SELECT = `SELECT s.*, (k.session_id IS NOT NULL) AS current
  FROM sessions s LEFT JOIN session_keys k ON k.session_id = s.session_id`;

/** What an assistant message does to its session's count of waiting messages (see recordMessage). */
export type WaitingChange = 'answer' | 'keep' | 'clear';

/** Where a session sits in the list: newest activity first, ties by id. */
export interface SessionSortKey {
  readonly updatedAt: number;
  readonly sessionId: string;
}

/** The SQL of the session index; synchronous, like all of better-sqlite3. */
export class SessionIndex {
  private readonly byId;
  private readonly byKey;
  private readonly firstPage;
  private readonly pageAfter;
  private readonly pageAt;
  private readonly countAll;
  private readonly allForKey;
  private readonly insertRow;
  private readonly setCurrentRow;
  private readonly endRow;
  private readonly userMessage;
  private readonly assistantMessage;
  private readonly assistantAside;
  private readonly addressUpdate;
  private readonly waitingRows;
  private readonly currentRows;
  private readonly unansweredUp;
  private readonly unansweredSet;

  constructor(private readonly db: Db) {
    this.byId = db.prepare<[string], Row>(`${SELECT} WHERE s.session_id = ?`);
    this.byKey = db.prepare<[string], Row>(`${SELECT} WHERE k.session_key = ?`);
    // Newest activity first on sessions_by_update; a later page seeks past the
    // previous page's last (updated_at, session_id). OFFSET only for old callers.
    this.firstPage = db.prepare<[number], Row>(`${SELECT} ORDER BY s.updated_at DESC, s.session_id DESC LIMIT ?`);
    this.pageAfter = db.prepare<[number, string, number], Row>(
      `${SELECT} WHERE (s.updated_at, s.session_id) < (?, ?) ORDER BY s.updated_at DESC, s.session_id DESC LIMIT ?`,
    );
    this.pageAt = db.prepare<[number, number], Row>(`${SELECT} ORDER BY s.updated_at DESC, s.session_id DESC LIMIT ? OFFSET ?`);
    // Sessions with a message waiting for its reply (recovery after a crash): a
    // partial index holds just those, so the cost follows them, not the sessions.
    this.waitingRows = db.prepare<[number], Row>(`SELECT s.*, 1 AS current FROM sessions s INDEXED BY sessions_unanswered
      JOIN session_keys k ON k.session_id = s.session_id WHERE s.unanswered > 0 AND s.updated_at >= ? ORDER BY s.updated_at DESC`);
    this.currentRows = db.prepare<[], Row>(`SELECT s.*, 1 AS current FROM session_keys k JOIN sessions s ON s.session_id = k.session_id`);
    this.unansweredUp = db.prepare(`UPDATE sessions SET unanswered = unanswered + 1, updated_at = max(updated_at, @at) WHERE session_id = @sessionId`);
    this.unansweredSet = db.prepare(`UPDATE sessions SET unanswered = @count WHERE session_id = @sessionId`);
    this.countAll = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM sessions');
    this.allForKey = db.prepare<[string], Row>(`${SELECT} WHERE s.session_key = ? ORDER BY s.created_at DESC, s.session_id DESC`);
    this.insertRow = db.prepare(`INSERT INTO sessions
      (session_id, session_key, platform, chat_type, chat_pseudonym, address, title, created_at, updated_at)
      VALUES (@sessionId, @sessionKey, @platform, @chatType, @chat, @address, @title, @createdAt, @createdAt)`);
    this.setCurrentRow = db.prepare(`INSERT INTO session_keys (session_key, session_id) VALUES (?, ?)
      ON CONFLICT (session_key) DO UPDATE SET session_id = excluded.session_id`);
    this.endRow = db.prepare('UPDATE sessions SET ended_at = ?, end_reason = ?, updated_at = ? WHERE session_id = ? AND ended_at IS NULL');
    this.userMessage = db.prepare(`UPDATE sessions SET user_message_count = user_message_count + 1,
      last_message_at = @at, updated_at = @at, last_message_preview = @preview WHERE session_id = @sessionId`);
    this.assistantMessage = db.prepare(`UPDATE sessions SET assistant_message_count = assistant_message_count + 1,
      unanswered = CASE WHEN @clear THEN 0 ELSE max(0, unanswered - 1) END,
      last_message_at = @at, updated_at = @at, last_message_preview = @preview WHERE session_id = @sessionId`);
    // The count left as it is: not in the SET list, so the index of waiting sessions is not rewritten.
    this.assistantAside = db.prepare(`UPDATE sessions SET assistant_message_count = assistant_message_count + 1,
      last_message_at = @at, updated_at = @at, last_message_preview = @preview WHERE session_id = @sessionId`);
    // Deliberately leaves updated_at and last_message_at alone: a metadata change
    // must not make a conversation look active to the idle reset.
    // Written only when something changed: most messages come from where the last one did.
    this.addressUpdate = db.prepare(`UPDATE sessions SET address = @address, title = coalesce(@title, title)
      WHERE session_id = @sessionId AND (address IS NOT @address OR title IS NOT coalesce(@title, title))`);
  }

  get(sessionId: string): SessionSummary | undefined {
    const row = this.byId.get(sessionId);
    return row && toSummary(row);
  }

  current(sessionKey: string): SessionSummary | undefined {
    const row = this.byKey.get(sessionKey);
    return row && toSummary(row);
  }

  /** The key's current session and its reply address as stored (JSON), to tell whether a message changes it. */
  currentWithAddress(sessionKey: string): { readonly session: SessionSummary; readonly address: string } | undefined {
    const row = this.byKey.get(sessionKey);
    return row && { session: toSummary(row), address: row.address };
  }

  address(sessionId: string): DeliveryAddress | undefined {
    const row = this.byId.get(sessionId);
    return row && (JSON.parse(row.address) as DeliveryAddress);
  }

  /** Every session a key has had, newest first. */
  history(sessionKey: string): SessionSummary[] {
    return this.allForKey.all(sessionKey).map(toSummary);
  }


  /** Current sessions active since `since` with a message waiting for its reply, as far as the index knows. */
  waitingSince(since: number): SessionSummary[] {
    return this.waitingRows.all(since).map(toSummary);
  }

  /** Every conversation's current session (recovery after a power cut reads them all). */
  currentSessions(): SessionSummary[] {
    return this.currentRows.all().map(toSummary);
  }

  /** A user message is about to be written: committed before it, so a crash never hides it from recovery. */
  markUnanswered(sessionId: string, at: number): void {
    this.unansweredUp.run({ sessionId, at });
  }

  /** Recovery read the transcript: this many messages wait for a reply. */
  setUnanswered(sessionId: string, count: number): void {
    this.unansweredSet.run({ sessionId, count });
  }

  /**
   * `limit` sessions after `from`: the last listed one's sort key (a seek), or a
   * number of sessions to skip (an OFFSET, for old callers).
   */
  list(from: SessionSortKey | number, limit: number): { sessions: SessionSummary[]; total: number } {
    const rows =
      typeof from !== 'number'
        ? this.pageAfter.all(from.updatedAt, from.sessionId, limit)
        : from === 0
          ? this.firstPage.all(limit)
          : this.pageAt.all(limit, from);
    return { sessions: rows.map(toSummary), total: this.countAll.get()!.n };
  }

  /** Inserts a session and makes it its key's current one, ending the previous one. */
  start(row: NewSessionRow, previous: { sessionId: string; reason: ResetReason } | undefined): void {
    // Fsynced: after a power cut a transcript must never exist without its session (recovery finds it here).
    durably(this.db, () => {
      if (previous) this.endRow.run(row.createdAt, previous.reason, row.createdAt, previous.sessionId);
      this.insertRow.run({ ...row, address: JSON.stringify(row.address) });
      this.setCurrentRow.run(row.sessionKey, row.sessionId);
    });
  }

  /**
   * Counts a message. What an assistant message does to the waiting count:
   * `answer` takes one off (it answers a message: it has a `replyTo`), `keep`
   * leaves it (an aside before the answer, a reset note: the message it
   * precedes still waits; or the store keeps the count up on purpose), `clear`
   * sets it to none (the store knows nothing waits any more).
   */
  recordMessage(sessionId: string, role: 'user' | 'assistant', at: number, preview: string, waiting: WaitingChange = 'answer'): void {
    if (role === 'user') this.userMessage.run({ sessionId, at, preview });
    else if (waiting === 'keep') this.assistantAside.run({ sessionId, at, preview });
    else this.assistantMessage.run({ sessionId, at, preview, clear: waiting === 'clear' ? 1 : 0 });
  }

  updateAddress(sessionId: string, address: DeliveryAddress, title: string | null): void {
    this.addressUpdate.run({ sessionId, address: JSON.stringify(address), title });
  }
}

function toSummary(row: Row): SessionSummary {
  return {
    sessionId: row.session_id,
    sessionKey: row.session_key,
    platform: row.platform,
    chatType: row.chat_type,
    chat: row.chat_pseudonym,
    title: row.title,
    lastMessagePreview: row.last_message_preview,
    messageCount: row.user_message_count + row.assistant_message_count,
    userMessageCount: row.user_message_count,
    assistantMessageCount: row.assistant_message_count,
    current: row.current === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastMessageAt: row.last_message_at,
    endedAt: row.ended_at,
    endReason: row.end_reason,
  };
}
