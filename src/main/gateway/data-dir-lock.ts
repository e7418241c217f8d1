import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { writePrivateFile } from './private-file';

/**
 * One gateway per data directory. Two gateways on one directory would both
 * answer every channel message (two ledger rows, no marker), append every user
 * turn twice to the shared transcript, and re-run each other's turns.
 *
 * The lock is an OS lock: `gateway.lock` is an SQLite file opened in exclusive
 * locking mode and written once, which makes SQLite take a POSIX (fcntl) write
 * lock on it, or LockFileEx on Windows, held until the connection closes. The
 * kernel drops it when the process dies in any way, SIGKILL and power loss
 * included, so a stale lock cannot outlive its owner and needs no cleanup. It
 * also works within one process (SQLite tracks its own locks per file), which
 * keeps tests honest. Holding it is also what lets a new gateway take over its
 * predecessor's rows at once: whoever held it before is gone.
 *
 * The lock file cannot be read while held, so who holds it is written next to
 * it, in `gateway.json` (0600): for the refusal message and for CLI commands
 * that talk to the running gateway.
 */
export const LOCK_FILE = 'gateway.lock';
export const HOLDER_FILE = 'gateway.json';

const holderSchema = z.object({
  pid: z.number().int(),
  mode: z.string(),
  startedAt: z.number(),
  /** The control socket CLI commands reach the running gateway through. */
  socket: z.string().nullable().optional(),
  /** The headless window's address (without its token). */
  url: z.string().nullable().optional(),
});

export type LockHolder = z.infer<typeof holderSchema>;

export class DataDirLocked extends Error {
  override readonly name = 'DataDirLocked';
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder | undefined,
  ) {
    super(describeHolder(dataDir, holder));
  }
}

export class DataDirLock {
  private holder: LockHolder;
  private released = false;

  constructor(
    private readonly dataDir: string,
    private readonly db: Database.Database,
    holder: LockHolder,
  ) {
    this.holder = holder;
    this.writeHolder();
  }

  get info(): LockHolder {
    return this.holder;
  }

  /** Adds what others should know of this gateway (its socket, its URL). */
  update(change: Partial<Pick<LockHolder, 'socket' | 'url'>>): void {
    if (this.released) return;
    this.holder = { ...this.holder, ...change };
    this.writeHolder();
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    try {
      this.db.close();
    } catch {
      // Closing can only fail if it is closed already; the lock is gone either way.
    }
  }

  private writeHolder(): void {
    writePrivateFile(join(this.dataDir, HOLDER_FILE), JSON.stringify(this.holder, null, 2) + '\n');
  }
}

/**
 * Takes the data directory's lock for this process, or throws DataDirLocked
 * naming the holder. Never waits: a second gateway refuses at once.
 */
export function acquireDataDirLock(dataDir: string, who: { readonly mode: string; readonly pid?: number }): DataDirLock {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, LOCK_FILE);
  const isNew = !existsSync(file);
  let db: Database.Database;
  try {
    db = openLockFile(file, {});
  } catch (error) {
    throw new Error(`cannot open the lock file ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  try {
    if (isNew) chmodSync(file, 0o600);
    db.pragma('locking_mode = EXCLUSIVE');
    // The first write takes the exclusive lock; in this locking mode it is kept.
    db.exec('BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS holder (pid INTEGER); COMMIT');
  } catch (error) {
    db.close();
    const code = (error as { code?: string }).code;
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') throw new DataDirLocked(dataDir, readLockHolder(dataDir));
    throw new Error(`cannot lock the data directory ${dataDir}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return new DataDirLock(dataDir, db, { pid: who.pid ?? process.pid, mode: who.mode, startedAt: Date.now(), socket: null, url: null });
}

/** What the running gateway said about itself (may be stale when nobody holds the lock). */
export function readLockHolder(dataDir: string): LockHolder | undefined {
  try {
    return holderSchema.parse(JSON.parse(readFileSync(join(dataDir, HOLDER_FILE), 'utf8')));
  } catch {
    return undefined;
  }
}

function describeHolder(dataDir: string, holder: LockHolder | undefined): string {
  if (!holder) return `another Homing gateway is already running on ${dataDir}`;
  const how = holder.mode === 'headless' && holder.url ? `headless, ${holder.url}` : holder.mode === 'headless' ? 'headless' : holder.mode;
  return `another Homing gateway is already running on ${dataDir} (pid ${holder.pid}, ${how}); stop it first, or use another --data-dir`;
}

/**
 * Whether a gateway holds the data directory's lock now, found without taking
 * it and without writing anything (for `homing doctor` and `homing service
 * status`): a read of the lock file is refused while its holder keeps it
 * exclusively. undefined when there is no lock file (no gateway ever ran here).
 */
export function isDataDirLocked(dataDir: string): boolean | undefined {
  const file = join(dataDir, LOCK_FILE);
  if (!existsSync(file)) return undefined;
  let db: Database.Database | undefined;
  try {
    db = openLockFile(file, { readonly: true, fileMustExist: true });
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    return false;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return true;
    throw new Error(`cannot read the lock file ${file}: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    db?.close();
  }
}

/** The lock file as an SQLite connection that never waits for a lock (HOMING_SQLITE_BINDING: the tray app's Electron build of the driver). */
function openLockFile(file: string, options: Pick<Database.Options, 'readonly' | 'fileMustExist'>): Database.Database {
  const nativeBinding = process.env.HOMING_SQLITE_BINDING;
  return new Database(file, { ...options, timeout: 0, ...(nativeBinding ? { nativeBinding } : {}) });
}
