import { chmodSync, existsSync } from 'node:fs';
import Database from 'better-sqlite3';

export type Db = Database.Database;

/**
 * One schema change. Ids are globally unique and sortable within their module
 * (`ledger-001-obligations`, `session-001-index`); each module owns its list, so
 * modules can add migrations without renumbering each other's.
 */
export interface Migration {
  readonly id: string;
  up(db: Db): void;
}

const statements = new WeakMap<Db, Map<string, Database.Statement>>();

/**
 * The prepared statement for `sql` on `db`, compiled once: better-sqlite3 does
 * not cache statements, and the ledger's send path runs the same few for every
 * chunk. For constant SQL only (each distinct text is kept while `db` lives).
 */
export function cachedStatement(db: Db, sql: string): Database.Statement {
  let cache = statements.get(db);
  if (!cache) statements.set(db, (cache = new Map()));
  let statement = cache.get(sql);
  if (!statement) cache.set(sql, (statement = db.prepare(sql)));
  return statement;
}

export class DatabaseError extends Error {
  override readonly name = 'DatabaseError';
}

export interface OpenDatabaseOptions {
  readonly migrations: readonly Migration[];
}

/**
 * Opens (creating if needed) `homing.db` and applies pending migrations, each in
 * its own transaction, recorded in `schema_migrations`.
 *
 * Durability: WAL. Commits run at `synchronous = NORMAL` by default: the WAL
 * is written at commit (so a committed transaction survives the process being
 * killed — the OS has it) but fsynced only at checkpoints and by the next
 * `FULL` commit, so a power cut may lose the newest ones. What must survive a
 * power cut *before* Homing acts on it — a reply recorded before it is sent, a
 * chunk marked "on its way" before it goes, a new session before its first
 * message, the user's Retry and Discard — commits through `durably`, at
 * `synchronous = FULL`: the WAL is fsynced, and with it every earlier NORMAL
 * commit (the WAL is one file, written in order). docs/delivery.md says what a
 * power cut can cost the rest (a delivered mark lost: that chunk is resent
 * with the marker).
 * On macOS fsync() does not flush the drive's cache, so `fullfsync` (F_FULLFSYNC)
 * is switched on too; elsewhere it is a no-op. The delivery ledger's guarantee
 * rests on this function: keep it in step with src/main/gateway/ledger.
 */
export function openDatabase(file: string, options: OpenDatabaseOptions): Db {
  // Under the tray app the gateway runs in Electron's Node, whose ABI differs from
  // the one node_modules was built for; the app points us at a matching binding.
  const nativeBinding = process.env.HOMING_SQLITE_BINDING;
  const isNew = file !== ':memory:' && !existsSync(file);
  let db: Db;
  try {
    db = new Database(file, nativeBinding ? { nativeBinding } : {});
  } catch (error) {
    throw new DatabaseError(`cannot open the database ${file}: ${describe(error)}`);
  }
  // Replies and conversation metadata are the user's alone.
  if (isNew) chmodSync(file, 0o600);
  try {
    db.pragma('busy_timeout = 5000');
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('fullfsync = ON');
    db.pragma('foreign_keys = ON');
    // 16 MiB of page cache (SQLite's default is 2 MiB): a turn touches pages all over
    // the ledger's indexes and the session index, and a miss reads the page again.
    db.pragma('cache_size = -16000');
    migrate(db, options.migrations);
    return db;
  } catch (error) {
    db.close();
    if (error instanceof DatabaseError) throw error;
    throw new DatabaseError(`the database ${file} is unusable: ${describe(error)}`);
  }
}

/**
 * Runs `work` in one immediate transaction committed at `synchronous = FULL`
 * (fsynced: it survives a power cut once this returns), then goes back to
 * NORMAL. Inside a transaction already open (a commit group's), `work` joins it
 * as a savepoint, and the outer commit decides: the commit group commits FULL
 * whenever it carries durable work.
 */
export function durably<T>(db: Db, work: () => T): T {
  if (db.inTransaction) return work();
  setSynchronous(db, 'FULL');
  try {
    return transact(db, work);
  } finally {
    setSynchronous(db, 'NORMAL');
  }
}

/**
 * One atomic write: its own immediate transaction, or — inside a transaction
 * already open, where every caller runs its work in a savepoint of its own (a
 * commit group's piece of work) — simply part of it. Cheaper than
 * `db.transaction(fn)`, which builds five wrappers per call, on the send path
 * that runs for every chunk.
 */
export function transact<T>(db: Db, work: () => T): T {
  if (db.inTransaction) return work();
  cachedStatement(db, 'BEGIN IMMEDIATE').run();
  let result: T;
  try {
    result = work();
  } catch (error) {
    if (db.inTransaction) cachedStatement(db, 'ROLLBACK').run();
    throw error;
  }
  try {
    cachedStatement(db, 'COMMIT').run();
  } catch (error) {
    if (db.inTransaction) cachedStatement(db, 'ROLLBACK').run();
    throw error;
  }
  return result;
}

/** The connection's commit durability (outside a transaction). */
export function setSynchronous(db: Db, level: 'FULL' | 'NORMAL'): void {
  cachedStatement(db, `PRAGMA synchronous = ${level}`).run();
}

export function migrate(db: Db, migrations: readonly Migration[]): string[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    id TEXT PRIMARY KEY,
    applied_at INTEGER NOT NULL
  ) STRICT`);
  const seen = new Set<string>();
  for (const migration of migrations) {
    if (seen.has(migration.id)) throw new DatabaseError(`duplicate migration id ${migration.id}`);
    seen.add(migration.id);
  }
  const applied = new Set(
    (db.prepare('SELECT id FROM schema_migrations').all() as { id: string }[]).map((row) => row.id),
  );
  const newer = [...applied].filter((id) => !seen.has(id));
  if (newer.length > 0) {
    throw new DatabaseError(
      `the database was written by a newer Homing (unknown migrations: ${newer.join(', ')}); update Homing`,
    );
  }
  const ran: string[] = [];
  const record = db.prepare('INSERT INTO schema_migrations (id, applied_at) VALUES (?, ?)');
  for (const migration of migrations) {
    if (applied.has(migration.id)) continue;
    db.transaction(() => {
      migration.up(db);
      record.run(migration.id, Date.now());
    }).immediate();
    ran.push(migration.id);
  }
  return ran;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
