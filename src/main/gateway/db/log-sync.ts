import { closeSync, fdatasync, openSync } from 'node:fs';
import type { Db } from './database';

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
 * Syncs are shared: while one runs, every caller that asks waits for one more
 * that starts when it ends (it covers them all), so a burst of conversations
 * costs at most two fdatasyncs, however many commits it made.
 */
export class LogSync {
  private fd: number | undefined;
  private running: Promise<void> | undefined;
  private next: Promise<void> | undefined;

  private constructor(private readonly path: string) {}

  /** The log sync of `db`, or undefined where it cannot stand in for FULL (see the class comment). */
  static forDatabase(db: Db): LogSync | undefined {
    if (process.platform !== 'linux' || db.memory) return undefined;
    if (String(db.pragma('journal_mode', { simple: true })).toLowerCase() !== 'wal') return undefined;
    return new LogSync(`${db.name}-wal`);
  }

  /** Resolves once everything committed before the call is on the disk; rejects if the disk said no. */
  sync(): Promise<void> {
    if (this.next) return this.next;
    if (!this.running) return this.start();
    this.next = this.running.then(noop, noop).then(() => {
      this.next = undefined;
      return this.start();
    });
    return this.next;
  }

  /**
   * Closes the log's file descriptor (opened again by the next sync) — once
   * the syncs asked for so far are done: a reply sent once its record is on
   * disk may still wait for one when the gateway stops.
   */
  close(): void {
    const pending = this.next ?? this.running;
    if (pending) {
      void pending.then(noop, noop).then(() => this.close());
      return;
    }
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    try {
      closeSync(fd);
    } catch {
      // Closed already: nothing to give back.
    }
  }

  private start(): Promise<void> {
    const run = new Promise<void>((resolve, reject) => {
      let fd: number;
      try {
        fd = this.open();
      } catch (error) {
        reject(error);
        return;
      }
      fdatasync(fd, (error) => (error ? reject(error) : resolve()));
    });
    this.running = run;
    const settled = () => {
      if (this.running === run) this.running = undefined;
    };
    run.then(settled, settled);
    return run;
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
