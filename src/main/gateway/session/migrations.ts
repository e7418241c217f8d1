import type { Migration } from '../db/database';

/**
 * The session index in homing.db. Append only: a shipped migration is never
 * edited, a change is a new numbered entry.
 *
 * `sessions` has one row per session id, current or not, so an old transcript
 * stays listed after a reset; `session_keys` says which session is current for
 * each routing key. The transcripts themselves are the record of what was said;
 * the counts and preview here are a summary of them for listing.
 */
export const sessionMigrations: readonly Migration[] = [
  {
    id: 'session-001-index',
    up(db) {
      db.exec(`
        CREATE TABLE sessions (
          session_id TEXT PRIMARY KEY,
          session_key TEXT NOT NULL,
          platform TEXT NOT NULL,
          chat_type TEXT NOT NULL CHECK (chat_type IN ('direct', 'group', 'channel', 'thread')),
          chat_pseudonym TEXT NOT NULL,
          -- JSON: the raw ids needed to reply (platform, chat, thread); never shown.
          address TEXT NOT NULL,
          title TEXT,
          created_at INTEGER NOT NULL,
          updated_at INTEGER NOT NULL,
          last_message_at INTEGER,
          user_message_count INTEGER NOT NULL DEFAULT 0,
          assistant_message_count INTEGER NOT NULL DEFAULT 0,
          last_message_preview TEXT,
          ended_at INTEGER,
          end_reason TEXT CHECK (end_reason IN ('daily', 'idle', 'command'))
        ) STRICT;
        CREATE INDEX sessions_by_key ON sessions (session_key, created_at);
        CREATE INDEX sessions_by_update ON sessions (updated_at DESC, session_id DESC);
        CREATE TABLE session_keys (
          session_key TEXT PRIMARY KEY,
          session_id TEXT NOT NULL REFERENCES sessions (session_id)
        ) STRICT;
      `);
    },
  },
  {
    // Every session read joins session_keys on session_id (is this session its
    // key's current one?); without this index each joined row was a scan of
    // session_keys, which at start-up with 10 000 sessions dominated boot.
    id: 'session-002-key-by-session',
    up(db) {
      db.exec('CREATE INDEX session_keys_by_session ON session_keys (session_id)');
    },
  },
  {
    // How many of a session's messages wait for a reply, kept by the store
    // (committed before each user line is written), so recovery after a crash
    // reads the few conversations with one instead of every active transcript.
    // Existing sessions active in the last two days are counted as waiting once:
    // the first recovery reads them and sets the true count.
    id: 'session-003-unanswered',
    up(db) {
      db.exec(`
        ALTER TABLE sessions ADD COLUMN unanswered INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX sessions_unanswered ON sessions (updated_at) WHERE unanswered > 0;
      `);
      db.prepare('UPDATE sessions SET unanswered = 1 WHERE updated_at >= ?').run(Date.now() - 2 * 86_400_000);
    },
  },
  {
    // The waiting sessions by id, not by `updated_at`: a busy conversation keeps
    // its count up (store.ts), and an index keyed on `updated_at` was rewritten
    // by every message's counters. Recovery sorts the few waiting rows itself.
    id: 'session-004-unanswered-by-session',
    up(db) {
      db.exec(`
        DROP INDEX sessions_unanswered;
        CREATE INDEX sessions_unanswered ON sessions (session_id) WHERE unanswered > 0;
      `);
    },
  },
  {
    // Session keys hold no raw id any more (session-key.ts): a group's chat and a
    // thread appear as pseudonyms. The renaming needs the install's pseudonym key,
    // so it runs at start (rename-keys.ts), not here; this table says it is done.
    id: 'session-005-pseudonymous-keys',
    up(db) {
      db.exec('CREATE TABLE session_keys_renamed (renamed_at INTEGER NOT NULL) STRICT');
    },
  },
];
