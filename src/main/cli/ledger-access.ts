import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { systemClock } from '../gateway/clock';
import { ledgerPolicy } from '../gateway/config/delivery-policy';
import { loadConfigFile, type ConfigResult } from '../gateway/config/load';
import { deliverySchema } from '../gateway/config/schema';
import { openDatabase, type Db } from '../gateway/db/database';
import { homingMigrations } from '../gateway/db/migrations';
import { callControlSocket, type ControlMethod } from '../gateway/control-socket';
import { acquireDataDirLock, DataDirLocked, type DataDirLock } from '../gateway/data-dir-lock';
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

export type ThroughGateway<T> = { readonly via: 'gateway'; readonly value: T } | { readonly via: 'here'; readonly value: T };

/**
 * A change to the ledger from the command line. One gateway runs per data
 * directory and owns its ledger, so while one runs the change goes through it
 * (its control socket), and it acts at once (a retried reply is sent now). With
 * none running, the change is made here, holding the data directory's lock so
 * that no gateway starts in the middle of it.
 */
export async function changeLedger<T>(
  dataDir: string,
  gateway: { readonly method: ControlMethod; readonly params: unknown; readonly read: (value: unknown) => T },
  here: (ledger: Ledger) => T,
  policy: Partial<LedgerPolicy> = {},
): Promise<ThroughGateway<T | undefined>> {
  return throughGatewayOrHere(dataDir, gateway, () => withLedger(dataDir, here, policy));
}

/**
 * A change to what a gateway owns (its ledger, its pairing list): through the
 * running gateway's control socket, or — with none running — here, holding the
 * data directory's lock so that no gateway starts in the middle of it.
 */
export async function throughGatewayOrHere<T, H>(
  dataDir: string,
  gateway: { readonly method: ControlMethod; readonly params: unknown; readonly read: (value: unknown) => T },
  here: () => H,
): Promise<{ readonly via: 'gateway'; readonly value: T } | { readonly via: 'here'; readonly value: H }> {
  let lock: DataDirLock | undefined;
  if (existsSync(dataDir)) {
    try {
      lock = acquireDataDirLock(dataDir, { mode: 'cli' });
    } catch (error) {
      if (!(error instanceof DataDirLocked)) throw error;
      const socket = error.holder?.socket;
      if (!socket) throw new Error(`${error.message}; it cannot be reached from here (no control socket)`);
      const result = await callControlSocket(socket, gateway.method, gateway.params).catch((cause: unknown) => {
        throw new Error(`the running gateway (pid ${error.holder?.pid}) cannot be reached: ${cause instanceof Error ? cause.message : String(cause)}`);
      });
      if (!result.ok) throw new GatewayRefused(result.error.code, result.error.message);
      return { via: 'gateway', value: gateway.read(result.value) };
    }
  }
  try {
    return { via: 'here', value: here() };
  } finally {
    lock?.release();
  }
}

/** The running gateway refused the change (not found, conflict): its words. */
export class GatewayRefused extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
