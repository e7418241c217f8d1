import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock } from '../gateway/clock';
import { openDatabase } from '../gateway/db/database';
import { homingMigrations } from '../gateway/db/migrations';
import { Ledger } from '../gateway/ledger';

/**
 * Opens the data directory's ledger for one CLI command, runs `use` and closes it.
 * undefined when there is no homing.db yet: nothing is owed, and nothing is created.
 * WAL lets the CLI use the database while a gateway runs.
 */
export function withLedger<T>(dataDir: string, use: (ledger: Ledger) => T): T | undefined {
  const file = join(dataDir, 'homing.db');
  if (!existsSync(file)) return undefined;
  const db = openDatabase(file, { migrations: homingMigrations });
  try {
    return use(new Ledger({ db, clock: systemClock }));
  } finally {
    db.close();
  }
}
