import type { Db, Migration } from '../db/database';
import { encodeParts } from './parts';

/**
 * The ledger's schema, append-only: never edit a migration that has shipped, add
 * the next number instead. Each one is applied in its own transaction by `migrate`.
 */
export const ledgerMigrations: readonly Migration[] = [
  {
    // Process instances that own obligations. An owner is an instance (random id),
    // never a bare pid: pids are reused and restart at every boot, so liveness is
    // judged on pid + process start time + boot id (see liveness.ts).
    id: 'ledger-001-instances',
    up(db) {
      db.exec(`CREATE TABLE ledger_instances (
        id TEXT PRIMARY KEY,
        pid INTEGER NOT NULL,
        process_start TEXT,
        boot_id TEXT,
        host TEXT NOT NULL,
        started_at INTEGER NOT NULL,
        heartbeat_at INTEGER NOT NULL,
        stopped_at INTEGER
      ) STRICT`);
    },
  },
  {
    id: 'ledger-002-obligations',
    up(db) {
      // owed_since_awake: the ledger's "awake clock" (ledger_meta.awake_ms, time
      // during which some gateway was sweeping) when the row became owed. The
      // stale cutoff compares that clock, not wall-clock age, so a long sleep or a
      // clock jump never abandons a row that never had its chance (see sweep.ts).
      // A shared clock rather than a per-row counter: a sweep writes one meta row,
      // not every owed row.
      db.exec(`CREATE TABLE ledger_obligations (
        id TEXT PRIMARY KEY,
        session_key TEXT NOT NULL,
        platform TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        thread_id TEXT,
        reply_to TEXT,
        content TEXT NOT NULL,
        state TEXT NOT NULL
          CHECK (state IN ('pending', 'attempting', 'delivered', 'failed', 'abandoned')),
        attempts INTEGER NOT NULL DEFAULT 0,
        owner_instance TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        last_attempt_at INTEGER,
        next_attempt_at INTEGER,
        delivered_at INTEGER,
        owed_since_awake INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        abandon_reason TEXT,
        chunk_count INTEGER NOT NULL CHECK (chunk_count >= 1),
        chunks_delivered INTEGER NOT NULL DEFAULT 0
      ) STRICT`);
      // Partial indexes hold only owed rows, so a sweep costs in proportion to what
      // is owed, however many delivered rows the table keeps. The sweep's queries
      // repeat these WHERE clauses verbatim so the planner can use them.
      db.exec(`CREATE INDEX ledger_obligations_unsettled
        ON ledger_obligations (owner_instance) WHERE state IN ('pending', 'attempting')`);
      db.exec(`CREATE INDEX ledger_obligations_retry
        ON ledger_obligations (next_attempt_at) WHERE state = 'failed' AND next_attempt_at IS NOT NULL`);
      db.exec(`CREATE INDEX ledger_obligations_delivered
        ON ledger_obligations (delivered_at) WHERE state = 'delivered'`);
      // Listing, newest first, with or without a state filter.
      db.exec('CREATE INDEX ledger_obligations_created ON ledger_obligations (created_at)');
      db.exec('CREATE INDEX ledger_obligations_state_created ON ledger_obligations (state, created_at)');
    },
  },
  {
    // Chunks: a long reply is sent as several messages; each has its own
    // progress and a stable idempotency key, so recovery resumes exactly where the
    // platform stopped receiving and a resend reuses the key.
    // state: owed (not sent), sending (a send began; it may have arrived),
    // delivered (the platform confirmed it).
    id: 'ledger-003-chunks',
    up(db) {
      db.exec(`CREATE TABLE ledger_chunks (
        obligation_id TEXT NOT NULL REFERENCES ledger_obligations (id) ON DELETE CASCADE,
        chunk_index INTEGER NOT NULL CHECK (chunk_index >= 0),
        text TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('owed', 'sending', 'delivered')),
        platform_message_id TEXT,
        idempotency_key TEXT NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (obligation_id, chunk_index)
      ) STRICT, WITHOUT ROWID`);
    },
  },
  {
    // The ledger's own bookkeeping: when the last sweep ran (last_sweep_at) and the
    // awake clock (awake_ms) the stale cutoff counts in.
    id: 'ledger-004-meta',
    up(db) {
      db.exec(`CREATE TABLE ledger_meta (
        key TEXT PRIMARY KEY,
        value INTEGER NOT NULL
      ) STRICT`);
    },
  },
  {
    // The second version of the delivery core (docs/delivery.md):
    // - seq: the reply's place in its conversation's outbox (per session_key). A
    //   reply is sent only once every earlier reply of its conversation is settled.
    // - fence: bumped by every claim and every retry. A claim's receipt is (owner,
    //   fence); a write presenting an older receipt changes nothing.
    // - message_ref: the user message the reply answers, so recovery after a crash
    //   can tell an answered message from an unanswered one.
    // - may_have_arrived: sticky per chunk. Once a send of the chunk began and its
    //   outcome was not seen, every later resend carries the marker, even after a
    //   resend that was refused outright.
    // - pid_ns: the owner's pid namespace, so a pid can be judged at once when it
    //   lives in ours (and only then).
    id: 'ledger-005-outbox',
    up(db) {
      db.exec(`ALTER TABLE ledger_obligations ADD COLUMN seq INTEGER NOT NULL DEFAULT 0`);
      db.exec(`ALTER TABLE ledger_obligations ADD COLUMN fence INTEGER NOT NULL DEFAULT 0`);
      db.exec(`ALTER TABLE ledger_obligations ADD COLUMN message_ref TEXT`);
      db.exec(`ALTER TABLE ledger_chunks ADD COLUMN may_have_arrived INTEGER NOT NULL DEFAULT 0`);
      db.exec(`ALTER TABLE ledger_instances ADD COLUMN pid_ns TEXT`);
      // Rows written before this version: their order is their recording order.
      db.exec(`UPDATE ledger_obligations AS o SET seq = n.rn FROM (
                 SELECT id, row_number() OVER (PARTITION BY session_key ORDER BY created_at, id) AS rn
                 FROM ledger_obligations) AS n
               WHERE o.id = n.id`);
      // A chunk left "sending" by the first version may have arrived.
      db.exec(`UPDATE ledger_chunks SET may_have_arrived = 1 WHERE state = 'sending'`);
      // The outbox: a conversation's owed rows in order. Its WHERE clause is OWED
      // (states.ts), repeated verbatim by every query that relies on this index.
      db.exec(`CREATE INDEX ledger_obligations_lane ON ledger_obligations (session_key, seq)
               WHERE state IN ('pending', 'attempting') OR (state = 'failed' AND next_attempt_at IS NOT NULL)`);
      db.exec(`CREATE UNIQUE INDEX ledger_obligations_seq ON ledger_obligations (session_key, seq) WHERE seq > 0`);
      db.exec(`CREATE INDEX ledger_obligations_message ON ledger_obligations (session_key, message_ref)`);
    },
  },
  {
    // Keyset pagination of the Deliveries list (operator-actions.ts): a page is
    // read by seeking past the last row's (created_at, id), newest first, one
    // seek per state of the tab. The listing indexes of ledger-002 end at
    // created_at; the seek and the id tie-break need the id in the index. These
    // carry it and replace them, so a write keeps as many indexes as before.
    id: 'ledger-006-list-keyset',
    up(db) {
      db.exec('DROP INDEX ledger_obligations_created');
      db.exec('DROP INDEX ledger_obligations_state_created');
      db.exec('CREATE INDEX ledger_obligations_list ON ledger_obligations (state, created_at, id)');
      db.exec('CREATE INDEX ledger_obligations_platform_list ON ledger_obligations (platform, state, created_at, id)');
    },
  },
  {
    // The number of owed rows (states.ts OWED, repeated verbatim), kept by
    // triggers in the same transaction as every change, so the sweep and every
    // view read one row instead of counting every owed row (100 000 rows being
    // sent took the sweep ~8 ms).
    id: 'ledger-007-owed-count',
    up(db) {
      const owed = (row: string) =>
        `(${row}.state IN ('pending', 'attempting') OR (${row}.state = 'failed' AND ${row}.next_attempt_at IS NOT NULL))`;
      db.exec(`INSERT INTO ledger_meta (key, value)
               VALUES ('owed_count', (SELECT count(*) FROM ledger_obligations WHERE ${owed('ledger_obligations')}))
               ON CONFLICT (key) DO UPDATE SET value = excluded.value`);
      db.exec(`CREATE TRIGGER ledger_owed_insert AFTER INSERT ON ledger_obligations WHEN ${owed('NEW')}
               BEGIN UPDATE ledger_meta SET value = value + 1 WHERE key = 'owed_count'; END`);
      db.exec(`CREATE TRIGGER ledger_owed_delete AFTER DELETE ON ledger_obligations WHEN ${owed('OLD')}
               BEGIN UPDATE ledger_meta SET value = value - 1 WHERE key = 'owed_count'; END`);
      db.exec(`CREATE TRIGGER ledger_owed_update AFTER UPDATE OF state, next_attempt_at ON ledger_obligations
               WHEN ${owed('OLD')} != ${owed('NEW')}
               BEGIN UPDATE ledger_meta SET value = value + CASE WHEN ${owed('NEW')} THEN 1 ELSE -1 END WHERE key = 'owed_count'; END`);
    },
  },
  {
    // One listing index, not two. A row moves in a listing index whenever its
    // state changes, so every reply wrote ledger_obligations_list when recorded
    // and again when delivered (~2.4 of a turn's ~20 log frames). The
    // (platform, state, created_at, id) index serves every list: one without a
    // platform filter seeks each (platform, state) pair and merges them, the
    // platforms read from the same index (operator-actions.ts).
    id: 'ledger-008-one-list-index',
    up(db) {
      db.exec('DROP INDEX ledger_obligations_list');
    },
  },
  {
    // Ledger v3, the narrow outbox (docs/delivery.md, "What a reply writes").
    // A reply touched ~11 b-trees (a TEXT primary key and its autoindex, six
    // indexes, a chunks table written twice, the owed-count trigger's page);
    // now three: the outbox row, keyed by an INTEGER that grows (its place in
    // every conversation's order: `row` replaces `seq`), the id index (small:
    // the outbox holds what is in flight, owed or given up), and one partial
    // index of owed rows by (owner, conversation) that both the sweep and a
    // conversation's head read. A reply's text is stored once; its parts are
    // derived from it (`parts`, parts.ts), and their progress is three columns:
    // the parts confirmed (a prefix: parts go out in order), whether the next
    // one is on its way, and whether it may have arrived (sticky).
    // Delivered rows move to ledger_history in batches (sweep.ts), where the
    // window's lists, counts and lookups find them through indexes written then,
    // not by every reply. The owed count is counted, not kept by triggers.
    id: 'ledger-009-narrow-outbox',
    up(db) {
      const columns = `
        row INTEGER PRIMARY KEY,
        id TEXT NOT NULL,
        session_key TEXT NOT NULL,
        message_ref TEXT,
        platform TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        thread_id TEXT,
        reply_to TEXT,
        content TEXT NOT NULL,
        parts TEXT,
        state TEXT NOT NULL
          CHECK (state IN ('pending', 'attempting', 'delivered', 'failed', 'abandoned')),
        attempts INTEGER NOT NULL DEFAULT 0,
        owner_instance TEXT,
        fence INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        last_attempt_at INTEGER,
        next_attempt_at INTEGER,
        delivered_at INTEGER,
        owed_since_awake INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        abandon_reason TEXT,
        chunk_count INTEGER NOT NULL CHECK (chunk_count >= 1),
        chunks_delivered INTEGER NOT NULL DEFAULT 0,
        part_sending INTEGER NOT NULL DEFAULT 0,
        part_maybe INTEGER NOT NULL DEFAULT 0`;
      db.exec(`CREATE TABLE ledger_outbox (${columns}) STRICT`);
      db.exec(`CREATE TABLE ledger_history (${columns}) STRICT`);
      copyVersion2(db);
      db.exec('DROP TABLE ledger_chunks');
      db.exec('DROP TABLE ledger_obligations');
      db.exec(`DELETE FROM ledger_meta WHERE key = 'owed_count'`);
      db.exec('CREATE UNIQUE INDEX ledger_outbox_id ON ledger_outbox (id)');
      // OWED (states.ts), verbatim. By owner first: a sweep seeks the rows of the
      // owners it may take and never reads a live sender's; a conversation's
      // head is the lowest row among each owner's seek (transitions.ts HEAD_ROW).
      db.exec(`CREATE INDEX ledger_outbox_owed ON ledger_outbox (owner_instance, session_key)
               WHERE state IN ('pending', 'attempting') OR (state = 'failed' AND next_attempt_at IS NOT NULL)`);
      db.exec('CREATE UNIQUE INDEX ledger_history_id ON ledger_history (id)');
      db.exec('CREATE INDEX ledger_history_list ON ledger_history (platform, created_at, id)');
      db.exec('CREATE INDEX ledger_history_delivered ON ledger_history (delivered_at)');
      db.exec('CREATE INDEX ledger_history_message ON ledger_history (session_key, message_ref)');
    },
  },
];

/**
 * Version 2's rows into version 3's tables. Rows are numbered so that every
 * conversation keeps its order (by seq) and the numbers follow recording time
 * otherwise; delivered rows go to the history, the rest (owed, failed, given
 * up) to the outbox. A reply's parts: the confirmed ones are
 * the delivered prefix; the next one is on its way if it was `sending`, and may
 * have arrived if it or any later part was ever sent unseen (a later part
 * cannot have been: parts go out in order; if one were, its flag is carried to
 * the next part, which then carries the marker).
 */
function copyVersion2(db: Db): void {
  // Every row's new number, once (a ledger may hold a million delivered rows: nothing here
  // holds them in memory).
  db.exec(`CREATE TEMP TABLE ledger_v2_order AS
           SELECT id, row_number() OVER (ORDER BY ordered_at, session_key, seq) AS new_row
           FROM (SELECT id, session_key, seq, max(created_at) OVER (PARTITION BY session_key ORDER BY seq ROWS UNBOUNDED PRECEDING) AS ordered_at
                 FROM ledger_obligations)`);
  const columns = `row, id, session_key, message_ref, platform, chat_id, thread_id, reply_to, content, parts, state, attempts,
    owner_instance, fence, created_at, updated_at, last_attempt_at, next_attempt_at, delivered_at, owed_since_awake, last_error,
    abandon_reason, chunk_count, chunks_delivered, part_sending, part_maybe`;
  // Delivered rows, the bulk, in one statement: their parts are never sent again; a reply of
  // several keeps their texts (as texts: parts.ts reads both forms).
  db.exec(`INSERT INTO ledger_history (${columns})
           SELECT n.new_row, o.id, o.session_key, o.message_ref, o.platform, o.chat_id, o.thread_id, o.reply_to, o.content,
                  CASE WHEN o.chunk_count <= 1 THEN NULL
                       ELSE (SELECT json_group_array(c.text ORDER BY c.chunk_index) FROM ledger_chunks AS c WHERE c.obligation_id = o.id) END,
                  'delivered', o.attempts, o.owner_instance, o.fence, o.created_at, o.updated_at, o.last_attempt_at, o.next_attempt_at,
                  o.delivered_at, o.owed_since_awake, o.last_error, o.abandon_reason, o.chunk_count, o.chunk_count, 0, 0
           FROM ledger_v2_order AS n JOIN ledger_obligations AS o ON o.id = n.id
           WHERE o.state = 'delivered'`);
  // The rest — owed, failed, given up: what is in flight or waits for the user, not millions —
  // one by one, their parts' progress read from their chunks.
  const rows = db
    .prepare(
      `SELECT o.*, n.new_row FROM ledger_v2_order AS n JOIN ledger_obligations AS o ON o.id = n.id
       WHERE o.state != 'delivered' ORDER BY n.new_row`,
    )
    .all() as Version2Row[];
  const chunksOf = db.prepare(
    'SELECT chunk_index, text, state, may_have_arrived FROM ledger_chunks WHERE obligation_id = ? ORDER BY chunk_index',
  );
  const intoOutbox = db.prepare(
    `INSERT INTO ledger_outbox (${columns})
     VALUES (@new_row, @id, @session_key, @message_ref, @platform, @chat_id, @thread_id, @reply_to, @content, @parts, @state, @attempts,
       @owner_instance, @fence, @created_at, @updated_at, @last_attempt_at, @next_attempt_at, @delivered_at, @owed_since_awake, @last_error,
       @abandon_reason, @chunk_count, @chunks_delivered, @part_sending, @part_maybe)`,
  );
  for (const row of rows) {
    const chunks = chunksOf.all(row.id) as { chunk_index: number; text: string; state: string; may_have_arrived: number }[];
    const texts = chunks.map((chunk) => (chunk.text === '' && row.chunk_count === 1 ? row.content : chunk.text));
    let delivered = 0;
    while (delivered < chunks.length && chunks[delivered]!.state === 'delivered') delivered++;
    const rest = chunks.slice(delivered);
    intoOutbox.run({
      ...row,
      parts: texts.length === 0 ? null : encodeParts(row.content, texts),
      chunk_count: Math.max(1, chunks.length || row.chunk_count),
      chunks_delivered: delivered,
      part_sending: rest[0]?.state === 'sending' ? 1 : 0,
      part_maybe: rest.some((chunk) => chunk.may_have_arrived === 1 || chunk.state === 'sending') ? 1 : 0,
    });
  }
  db.exec('DROP TABLE ledger_v2_order');
}

/** A version 2 row as copyVersion2 reads it. */
interface Version2Row {
  readonly id: string;
  readonly state: string;
  readonly content: string;
  readonly chunk_count: number;
  readonly new_row: number;
  readonly [column: string]: unknown;
}
