import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock } from '../gateway/clock';
import { openDatabase, type Db } from '../gateway/db/database';
import { homingMigrations } from '../gateway/db/migrations';
import { Ledger } from '../gateway/ledger';

/**
 * Opens the data directory's homing.db for one CLI command, runs `use` and closes it.
 * undefined when there is no homing.db yet: nothing to show, and nothing is created.
 * WAL lets the CLI use the database while a gateway runs.
 */
export function withDatabase<T>(dataDir: string, use: (db: Db) => T): T | undefined {
  const file = join(dataDir, 'homing.db');
  if (!existsSync(file)) return undefined;
  const db = openDatabase(file, { migrations: homingMigrations });
  try {
    return use(db);
  } finally {
    db.close();
  }
}

/** The data directory's ledger for one CLI command (see `withDatabase`). */
export function withLedger<T>(dataDir: string, use: (ledger: Ledger) => T): T | undefined {
  return withDatabase(dataDir, (db) => use(new Ledger({ db, clock: systemClock })));
}
