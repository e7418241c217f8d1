import { transact, type Db } from '../db/database';
import type { Logger } from '../logger';
import type { Pseudonymiser } from './pseudonyms';
import { pseudonymousKey } from './session-key';

/**
 * Renames, once, the session keys written before keys were pseudonymous (a
 * group's raw chat id or a raw thread id in them) to the keys `buildSessionKey`
 * builds now — in the session index (`sessions`, `session_keys`) and in the
 * ledger's conversations (`session_key` of `ledger_outbox`, whose rows each
 * conversation's order runs through, and of `ledger_history`) — in one transaction, so a conversation keeps its
 * context and its outbox. Marked done in `session_keys_renamed`.
 *
 * Transcript headers keep the key they were written with: transcripts are
 * append-only records, never rewritten in place (a rewrite cut by a power cut
 * could lose the conversation), and nothing reads a header's key back (the index
 * is the way in). A conversation's next transcript (after a reset) has the new key.
 *
 * Returns how many keys were renamed; 0 when it was done before. A failure is
 * logged and leaves every key as it was (the conversations then start afresh
 * under the new keys: nothing is lost, earlier context is not carried on).
 */
/** The ledger's tables that name conversations. */
const LEDGER_TABLES = ['ledger_outbox', 'ledger_history'] as const;

export function renameRawSessionKeys(db: Db, pseudonyms: Pseudonymiser, logger: Logger, now: number): number {
  try {
    // Done at an earlier start (every start but one): a read, no write lock taken.
    if (db.prepare('SELECT 1 FROM session_keys_renamed LIMIT 1').get()) return 0;
    return transact(db, () => {
      const renames = new Map<string, string>();
      const rename = (key: string, platform: string) => {
        const renamed = pseudonymousKey(key, platform, pseudonyms);
        if (renamed !== undefined) renames.set(key, renamed);
      };
      for (const row of db.prepare('SELECT DISTINCT session_key AS key, platform FROM sessions').all() as { key: string; platform: string }[]) rename(row.key, row.platform);
      for (const table of LEDGER_TABLES) {
        for (const row of db.prepare(`SELECT DISTINCT session_key AS key, platform FROM ${table}`).all() as { key: string; platform: string }[]) rename(row.key, row.platform);
      }
      const inSessions = db.prepare('UPDATE sessions SET session_key = ? WHERE session_key = ?');
      const inKeys = db.prepare('UPDATE session_keys SET session_key = ? WHERE session_key = ?');
      const inLedger = LEDGER_TABLES.map((table) => db.prepare(`UPDATE ${table} SET session_key = ? WHERE session_key = ?`));
      for (const [from, to] of renames) {
        inSessions.run(to, from);
        inKeys.run(to, from);
        for (const statement of inLedger) statement.run(to, from);
      }
      db.prepare('INSERT INTO session_keys_renamed (renamed_at) VALUES (?)').run(now);
      if (renames.size > 0) logger.info('session keys renamed: they hold pseudonyms now, no raw chat or thread id', { keys: renames.size });
      return renames.size;
    });
  } catch (error) {
    logger.error('the session keys could not be renamed to pseudonyms; the conversations they name start afresh', { error });
    return 0;
  }
}
