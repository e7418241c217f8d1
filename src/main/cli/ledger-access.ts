import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { systemClock } from '../gateway/clock';
import { ledgerPolicy } from '../gateway/config/delivery-policy';
import { loadConfigFile, type ConfigResult } from '../gateway/config/load';
import { deliverySchema } from '../gateway/config/schema';
import { openDatabase, type Db } from '../gateway/db/database';
import { homingMigrations } from '../gateway/db/migrations';
import { Ledger, type LedgerPolicy } from '../gateway/ledger';

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

/** The data directory's ledger for one CLI command (see `withDatabase`), with the delivery rules `policy` (see deliveryPolicy). */
export function withLedger<T>(dataDir: string, use: (ledger: Ledger) => T, policy: Partial<LedgerPolicy> = {}): T | undefined {
  return withDatabase(dataDir, (db) => use(new Ledger({ db, clock: systemClock, policy })));
}

/** Only the section the CLI needs: an error elsewhere in the file does not stop `homing sweep`. */
const deliverySectionSchema = z.looseObject({ delivery: deliverySchema });

/**
 * The delivery rules in `<dataDir>/config.json` (attempt cap, stale cutoff,
 * retention, lease), as the running gateway applies them; the defaults when
 * there is no file. An error in that section comes back as the one-line
 * message the gateway would log.
 */
export function deliveryPolicy(dataDir: string): ConfigResult<Partial<LedgerPolicy>> {
  const result = loadConfigFile(join(dataDir, 'config.json'), deliverySectionSchema);
  return result.ok ? { ok: true, value: ledgerPolicy(result.value.delivery) } : result;
}
