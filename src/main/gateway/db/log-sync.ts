import { closeSync, fdatasync, openSync } from 'node:fs';
import type { Db } from './database';
import { SharedSync, type SyncFile } from './shared-sync';

export interface LogSyncOptions {
  readonly fdatasync?: SyncFile;
}

/** What a sync rejects with once the disk has failed one: nothing is durable until the log is healed. */
export class LogNotDurableError extends Error {
  override readonly name = 'LogNotDurableError';
}

/**
 * Makes what is committed to a WAL database durable off the event loop: an
 * fdatasync of the write-ahead log on a thread of libuv's pool, while the
 * event loop goes on (another conversation's turn, the bookkeeping of a send).
 *
 * Equivalent to committing at `synchronous = FULL`, which fsyncs the same log
 * right after the commit writes it, but synchronously: a commit made at NORMAL
 * has written its frames to the log (the OS has them), and an fdatasync of the
 * log started after that puts them, and every frame before them, on the disk.
 * Checkpoints sync the log and the database file themselves at NORMAL, so
 * nothing that was synced is ever overwritten before it is in the database.
 *
 * Only on Linux: there fsync reaches the disk. macOS needs F_FULLFSYNC, which
 * Node cannot ask for, and Windows needs a handle opened for writing; there the
 * group commits at FULL as before (`forDatabase` says undefined).
 *
 * Syncs are shared (shared-sync.ts): while one runs, every caller that asks
 * waits for one more that starts when it ends (it covers them all), so a burst
 * of conversations costs at most two fdatasyncs, however many commits it made.
 *
 * **A failed fdatasync is not carried past.** On Linux a failed writeback
 * marks the pages clean and reports the error once: a later fdatasync can
 * succeed although the frames before it never reached the disk. So the first
 * failure puts the log into the failing state: every later sync rejects
 * (`LogNotDurableError`) — nothing committed after it is reported durable —
 * until a heal succeeds: the log emptied into the database by a full
 * checkpoint (`wal_checkpoint(TRUNCATE)`, which writes every page again from
 * what SQLite reads now and syncs the database file), then the database file
 * and the log each fdatasynced through a descriptor opened after the failure.
 * Each sync asked for while failing tries one heal (shared, like syncs).
 */
export class LogSync {
  private fd: number | undefined;
  private readonly syncs = new SharedSync(() => this.start());
  /** The disk's error that put the log into the failing state, until a heal succeeds. */
  private failure: Error | undefined;
  private healing: Promise<void> | undefined;
  private readonly fdatasync: SyncFile;

  private constructor(
    private readonly db: Db,
    private readonly path: string,
    options: LogSyncOptions,
  ) {
    this.fdatasync = options.fdatasync ?? fdatasync;
  }

  /** The log sync of `db`, or undefined where it cannot stand in for FULL (see the class comment). */
  static forDatabase(db: Db, options: LogSyncOptions = {}): LogSync | undefined {
    if (process.platform !== 'linux' || db.memory) return undefined;
    if (String(db.pragma('journal_mode', { simple: true })).toLowerCase() !== 'wal') return undefined;
    return new LogSync(db, `${db.name}-wal`, options);
  }

  /** The disk's error while the log is failing (a sync failed and no heal has succeeded since). */
  get failing(): Error | undefined {
    return this.failure;
  }

  /**
   * Resolves once everything committed before the call is on the disk; rejects
   * if the disk said no, and — once it has — until the log is healed.
   */
  sync(): Promise<void> {
    if (this.failure) return this.heal();
    return this.syncs.sync();
  }

  /**
   * Closes the log's file descriptor (opened again by the next sync) — once
   * the syncs asked for so far are done: a reply sent once its record is on
   * disk may still wait for one when the gateway stops.
   */
  close(): void {
    const pending = this.syncs.pending;
    if (pending) {
      void pending.then(noop, noop).then(() => this.close());
      return;
    }
    this.closeFd();
  }

  private closeFd(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    try {
      closeSync(fd);
    } catch {
      // Closed already: nothing to give back.
    }
  }

  /**
   * One fdatasync of the log; its failure puts the log into the failing state.
   * A sync asked for while the failing one ran starts after it: it heals, or
   * reports nothing durable — a plain fdatasync now could succeed over the
   * frames the failed one dropped.
   */
  private start(): Promise<void> {
    if (this.failure) return this.heal();
    return new Promise<void>((resolve, reject) => {
      let fd: number;
      try {
        fd = this.open();
      } catch (error) {
        reject(error);
        return;
      }
      this.fdatasync(fd, (error) => {
        if (!error) return resolve();
        this.failure ??= error;
        reject(error);
      });
    });
  }

  /** One heal at a time: every sync asked for while one runs shares it. */
  private heal(): Promise<void> {
    if (!this.healing) {
      const healing = this.tryHeal();
      this.healing = healing;
      const settled = () => {
        if (this.healing === healing) this.healing = undefined;
      };
      healing.then(settled, settled);
    }
    return this.healing;
  }

  private async tryHeal(): Promise<void> {
    const failure = this.failure;
    if (!failure) return;
    const notDurable = (why: string) => new LogNotDurableError(`the disk failed to sync the ledger's log (${failure.message}); nothing is durable until it is written again in full: ${why}`);
    // Synchronously, before any await: no transaction of ours is open between two turns of the event loop.
    try {
      const [result] = this.db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number; log: number; checkpointed: number }[];
      if (!result || result.busy !== 0 || result.log !== result.checkpointed) throw new Error('another connection is reading the log');
    } catch (error) {
      throw notDurable(`the checkpoint failed (${describe(error)})`);
    }
    // The descriptor that saw the failure goes; fresh ones report only what comes after.
    await this.syncs.pending?.then(noop, noop);
    this.closeFd();
    for (const file of [this.db.name, this.path]) {
      try {
        await this.syncPath(file);
      } catch (error) {
        throw notDurable(`${file} could not be synced (${describe(error)})`);
      }
    }
    if (this.failure === failure) this.failure = undefined;
  }

  /** fdatasyncs `file` through a descriptor of its own, closed after. */
  private syncPath(file: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const fd = openSync(file, 'r');
      this.fdatasync(fd, (error) => {
        try {
          closeSync(fd);
        } catch {
          // Closed already: nothing to give back.
        }
        if (error) reject(error);
        else resolve();
      });
    });
  }

  /**
   * The log's file, opened once: SQLite keeps that one file while a connection
   * is open (it deletes the log only when the last connection closes, and
   * truncating keeps the file), so it cannot change under the group.
   */
  private open(): number {
    this.fd ??= openSync(this.path, 'r');
    return this.fd;
  }
}

function noop(): void {}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
