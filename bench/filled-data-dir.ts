import { spawnSync } from 'node:child_process';
import Database from 'better-sqlite3';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/main/gateway/db/database';
import { homingMigrations } from '../src/main/gateway/db/migrations';
import { SESSIONS_DIR, TRANSCRIPT_SUFFIX } from '../src/main/gateway/session/session-reader';
import { formatRecord } from '../src/main/gateway/session/transcript-record';

export interface FillSizes {
  /** Delivered ledger rows, spread over the last six days (inside the 7-day retention: none is pruned). */
  readonly delivered: number;
  /** Pending rows for IRC, which the bench's gateway does not configure: they stay owed. */
  readonly owed: number;
  /** Conversations active in the last day, each with a transcript whose message is answered. */
  readonly sessions: number;
}

export const LARGE: FillSizes = { delivered: 1_000_000, owed: 300, sessions: 10_000 };
export const SMALL: FillSizes = { delivered: 100_000, owed: 300, sessions: 1_000 };

const DAY = 86_400_000;
// A short chat reply (160 characters): stored twice (row and chunk), a million of them make a 0.7 GB file.
const REPLY = 'Sure — here is what I found. '.repeat(12).slice(0, 160);

/**
 * A data directory as months of use leave it, written by direct SQL in one
 * transaction on the real schema (`openDatabase` + `homingMigrations`) and
 * transcripts in the store's own format and place (`sessions/<id>.jsonl`):
 * recording a million replies through the ledger, one durable commit each,
 * would take hours. Rows belong to the sessions' conversations, each
 * conversation's replies numbered in recording order (row), the newest one being the
 * answer its transcript ends with. Returns the fill time in ms.
 */
export function fillDataDir(dataDir: string, sizes: FillSizes, now = Date.now()): number {
  const started = performance.now();
  const file = join(dataDir, 'homing.db');
  openDatabase(file, { migrations: homingMigrations }).close();
  // The fill alone: no journal, no fsync, a cache that holds the whole file.
  // The gateway reopens the file in WAL mode, as it always does.
  const db = new Database(file);
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -2000000');
  mkdirSync(join(dataDir, SESSIONS_DIR), { recursive: true });
  const keys = Array.from({ length: sizes.sessions }, (_, n) => `agent:main:irc:direct:user${n}`);
  if (sizes.delivered < sizes.sessions) throw new Error('every conversation needs a delivered reply');
  const session = db.prepare(`INSERT INTO sessions
    (session_id, session_key, platform, chat_type, chat_pseudonym, address, title, created_at, updated_at, last_message_at,
     user_message_count, assistant_message_count, last_message_preview)
    VALUES (?, ?, 'irc', 'direct', ?, ?, ?, ?, ?, ?, 1, 1, ?)`);
  const current = db.prepare('INSERT INTO session_keys (session_key, session_id) VALUES (?, ?)');
  const rows = sizes.delivered + sizes.owed;
  const start = now - 6 * DAY;
  const step = (6 * DAY - 60_000) / rows;
  // Indexes are built once at the end, from sorted data, with the schema's own
  // statements: a million rows inserted into seven indexes one by one take minutes.
  const indexes = db
    .prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN ('ledger_outbox', 'ledger_history')`)
    .all() as { name: string; sql: string }[];
  try {
    for (const { name } of indexes) db.exec(`DROP INDEX ${name}`);
    db.transaction(() => {
      // Row n: conversation n % sessions, its place in that outbox n / sessions + 1,
      // created at an even step over six days; the last `owed` rows are pending.
      // (better-sqlite3 binds every number as REAL: the counts are written into the SQL as integers.)
      const { delivered } = sizes;
      const conversations = sizes.sessions;
      // Delivered rows in the history, the rest in the outbox (ledger-009), numbered n + 1.
      const insert = (table: string, from: number, to: number) =>
        db
          .prepare(
            `WITH RECURSIVE r(n) AS (SELECT ${from} UNION ALL SELECT n + 1 FROM r WHERE n + 1 < ${to})
             INSERT INTO ${table}
               (row, id, session_key, platform, chat_id, content, state, attempts, created_at, updated_at, last_attempt_at, delivered_at,
                chunk_count, chunks_delivered, message_ref)
             SELECT n + 1, printf('%024x', n), 'agent:main:irc:direct:user' || (n % ${conversations}), 'irc', 'user' || (n % ${conversations}), @reply,
                    iif(n < ${delivered}, 'delivered', 'pending'), iif(n < ${delivered}, 1, 0),
                    CAST(@start + n * @step AS INTEGER), CAST(@start + n * @step AS INTEGER),
                    iif(n < ${delivered}, CAST(@start + n * @step AS INTEGER), NULL), iif(n < ${delivered}, CAST(@start + n * @step AS INTEGER), NULL),
                    1, iif(n < ${delivered}, 1, 0), 'm' || n
             FROM r`,
          )
          .run({ reply: REPLY, start, step });
      if (delivered > 0) insert('ledger_history', 0, delivered);
      if (rows > delivered) insert('ledger_outbox', delivered, rows);
      // Each conversation's newest delivered reply: the answer its transcript ends with.
      const lastOf = new Map(
        (
          db
            .prepare(
              `SELECT n % ${conversations} AS conversation, printf('%024x', n) AS id, CAST(@start + n * @step AS INTEGER) AS at, 'm' || n AS ref
               FROM (WITH RECURSIVE r(n) AS (SELECT ${delivered - conversations} UNION ALL SELECT n + 1 FROM r WHERE n + 1 < ${delivered}) SELECT n FROM r)`,
            )
            .all({ start, step }) as { conversation: number; id: string; at: number; ref: string }[]
        ).map((row) => [row.conversation, row]),
      );
      for (let n = 0; n < sizes.sessions; n++) {
        const last = lastOf.get(n)!;
        const sessionId = `${new Date(last.at).toISOString().slice(0, 10).replace(/-/g, '')}-000000-000-${n.toString(16).padStart(10, '0')}`;
        const createdAt = now - DAY + 60_000;
        const address = JSON.stringify({ platform: 'irc', chatId: `user${n}`, chatType: 'direct' });
        session.run(sessionId, keys[n], `irc:${n.toString(16).padStart(12, '0')}`, address, `user${n}`, createdAt, last.at, last.at, REPLY.slice(0, 80));
        current.run(keys[n], sessionId);
        const transcript =
          formatRecord({ type: 'session', v: 1, sessionId, sessionKey: keys[n]!, createdAt, platform: 'irc', chatType: 'direct', chat: `irc:${n}` }) +
          formatRecord({ type: 'user', at: last.at - 2_000, messageRef: last.ref, sender: { id: `irc_${n}`, name: `user${n}` }, text: 'what did you find?' }) +
          formatRecord({ type: 'assistant', at: last.at, obligationId: last.id, replyTo: last.ref, text: REPLY });
        writeFileSync(join(dataDir, SESSIONS_DIR, `${sessionId}${TRANSCRIPT_SUFFIX}`), transcript);
      }
    })();
    for (const { sql } of indexes) db.exec(sql);
    db.pragma('journal_mode = WAL');
  } finally {
    db.close();
  }
  return performance.now() - started;
}

const filled = new Map<string, { dir: string; fillMs: number }>();

/**
 * One filled data directory per size for the whole `npm run bench` run (the
 * start-up and the deliveries benches share it; each fill takes half a
 * minute), flushed to the disk once filled, removed when the process exits. Who uses it must leave its rows as
 * they are: a gateway started on it may add its own files and instance row.
 */
export function sharedFilledDataDir(sizes: FillSizes): { dir: string; fillMs: number } {
  const key = JSON.stringify(sizes);
  let found = filled.get(key);
  if (!found) {
    const dir = mkdtempSync(join(tmpdir(), 'homing-bench-filled-'));
    if (filled.size === 0) process.once('exit', () => filled.forEach((entry) => rmSync(entry.dir, { recursive: true, force: true })));
    found = { dir, fillMs: fillDataDir(dir, sizes) };
    // The fill writes without fsync: ~0.8 GB the OS would write back while the next
    // benches run, slowing their fsyncs (the pipeline's and the ledger's) and starts.
    // On the disk before anything is timed, as a used machine's data is.
    spawnSync('sync');
    filled.set(key, found);
  }
  return found;
}
