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
 * Durability: WAL with `synchronous = FULL`. In WAL mode `NORMAL` skips the fsync
 * of the WAL at commit, so a transaction that returned successfully can vanish on
 * power loss; for the ledger that would mean "sent but not recorded". `FULL`
 * fsyncs the WAL on every commit, which is what "recorded before sent" needs.
 * `EXTRA` would add nothing here: it only matters in rollback-journal mode.
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
    db.pragma('synchronous = FULL');
    db.pragma('fullfsync = ON');
    db.pragma('foreign_keys = ON');
    migrate(db, options.migrations);
    return db;
  } catch (error) {
    db.close();
    if (error instanceof DatabaseError) throw error;
    throw new DatabaseError(`the database ${file} is unusable: ${describe(error)}`);
  }
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
