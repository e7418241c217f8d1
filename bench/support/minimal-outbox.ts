import { CommitGroup } from '../../src/main/gateway/db/commit-group';
import { cachedStatement, openDatabase, setSynchronous, type Db } from '../../src/main/gateway/db/database';
import { cyclesPerSecond } from '../harness';

/**
 * The least a ledger can do and keep the rule "recorded durably before it is
 * sent", as issue 35 describes it: one table with an INTEGER key, the text
 * stored once, one partial index of what is owed per conversation, a unique
 * (conversation, message) key for idempotent records — committed through
 * Homing's own group commit and off-loop fdatasync (db/commit-group.ts,
 * db/log-sync.ts). No claims, no order between replies, no chunks, no history,
 * no events: what is left is the price of the rule itself on this disk.
 *
 * The ledger bench runs it in the same rounds as Homing's ledger and the raw
 * commits, so its ratios say how near the rule lets any outbox come to raw
 * commits on this machine: a ceiling for the ledger's, not a target for it.
 */
export interface MinimalOutbox {
  readonly db: Db;
  /** Runs `conversations` loops at once, each recording, sending and marking its share of `n` replies in turn; cycles a second. */
  rate(n: number, conversations: number): Promise<number>;
  close(): void;
}

const SCHEMA = `
  CREATE TABLE outbox (
    row INTEGER PRIMARY KEY,
    conversation TEXT NOT NULL,
    message TEXT NOT NULL,
    content TEXT NOT NULL,
    delivered INTEGER NOT NULL DEFAULT 0
  ) STRICT;
  CREATE UNIQUE INDEX outbox_message ON outbox (conversation, message);
  CREATE INDEX outbox_owed ON outbox (conversation, row) WHERE delivered = 0;`;
const RECORD = 'INSERT INTO outbox (conversation, message, content) VALUES (?, ?, ?)';
const DELIVERED = 'UPDATE outbox SET delivered = 1 WHERE row = ?';

/** The minimal outbox's table and indexes on a fresh database `file`. */
function openOutbox(file: string): Db {
  const db = openDatabase(file, { migrations: [] });
  db.exec(SCHEMA);
  return db;
}

/** A minimal outbox on `file` (`:memory:`: no disk, its CPU alone); `send` confirms one reply. */
export function minimalOutbox(file: string, send: () => Promise<unknown>, reply: string): MinimalOutbox {
  const db = openOutbox(file);
  const group = new CommitGroup(db);
  let next = 0;
  const cycle = async (conversation: number): Promise<void> => {
    const ref = next++;
    const { value: row, onDisk } = await group.committed(
      () => cachedStatement(db, RECORD).run(`bench:${conversation}`, `msg-${ref}`, `${ref} ${reply}`).lastInsertRowid,
      { oneWrite: true },
    );
    await onDisk;
    await send();
    group.later(() => void cachedStatement(db, DELIVERED).run(row), undefined, { oneWrite: true });
  };
  return {
    db,
    rate: (n, conversations) => cyclesPerSecond(n, conversations, cycle),
    close() {
      group.close();
      db.close();
    },
  };
}

/**
 * The barest cycle at one conversation: the record committed at FULL on the
 * event loop, as a raw commit is (no group, no thread), the send, the
 * delivered mark committed at NORMAL. What is left of a cycle's cost beside a
 * raw commit is the reply's row and indexes and the mark's pages, which the
 * next record's fsync writes out.
 */
export function bareCycles(file: string, send: () => Promise<unknown>, reply: string): { rate(n: number): Promise<number>; close(): void } {
  const db = openOutbox(file);
  let next = 0;
  const cycle = async (): Promise<void> => {
    const ref = next++;
    setSynchronous(db, 'FULL');
    const row = cachedStatement(db, RECORD).run('bench:0', `msg-${ref}`, `${ref} ${reply}`).lastInsertRowid;
    await send();
    setSynchronous(db, 'NORMAL');
    cachedStatement(db, DELIVERED).run(row);
  };
  return {
    rate: (n) => cyclesPerSecond(n, 1, cycle),
    close: () => db.close(),
  };
}
