import { cachedStatement, durably, transact, type Db } from './database';
import { LogSync } from './log-sync';

/**
 * Group commit: the writes of every conversation made in one turn of the event
 * loop are committed together, in one transaction, instead of one commit (and
 * one fsync) each.
 *
 * Two kinds of work:
 *  - `durable`: must survive a power cut before the caller goes on (a reply
 *    recorded before it is sent, a chunk marked "on its way"). The caller awaits
 *    it; one fsync covers every conversation's durable work of that turn. On
 *    Linux the group commits at NORMAL and then fdatasyncs the log off the
 *    event loop (log-sync.ts), resolving durable work once that is done; the
 *    event loop meanwhile runs other turns. Elsewhere a group that carries any
 *    durable work is committed at `synchronous = FULL`.
 *  - `later`: bookkeeping after the fact (a delivered mark, a session's
 *    counters). Committed in the same transaction as whatever else is queued,
 *    at NORMAL when nothing durable is: it survives the process being killed as
 *    soon as it is committed (the OS has the WAL) and a power cut once the next
 *    FULL commit or checkpoint fsyncs the WAL.
 *
 * Each piece of work runs in its own savepoint: one that throws is rolled back
 * alone and fails alone. A commit that fails fails every piece in it.
 * Everything queued runs in the order it was queued.
 */
export class CommitGroup {
  private queue: Work[] = [];
  private scheduled = false;
  private waiting: (() => void)[] = [];
  private readonly log: LogSync | undefined;

  constructor(private readonly db: Db) {
    this.log = LogSync.forDatabase(db);
  }

  /** Runs `work` in the next group commit, fsynced; resolves with its result once committed. */
  durable<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.push({ work, durable: true, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /** Runs `work` in the next group commit; `onError` hears if it (or the commit) failed. */
  later(work: () => void, onError?: (error: unknown) => void): void {
    this.push({ work, durable: false, resolve: () => {}, reject: onError ?? (() => {}) });
  }

  /** Resolves after the next flush (at once when nothing is queued). */
  flushed(): Promise<void> {
    if (this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Commits everything queued now (also called by the scheduler). */
  flush(): void {
    this.scheduled = false;
    const batch = this.queue;
    const waiting = this.waiting;
    this.queue = [];
    this.waiting = [];
    if (batch.length === 0) {
      for (const wake of waiting) wake();
      return;
    }
    const outcomes = new Array<{ ok: true; value: unknown } | { ok: false; error: unknown }>(batch.length);
    const run = (sql: string) => cachedStatement(this.db, sql).run();
    let commitError: unknown;
    const durable = batch.some((item) => item.durable);
    try {
      (durable && !this.log ? durably : transact)(this.db, () =>
        batch.forEach((item, index) => {
          run('SAVEPOINT work');
          try {
            outcomes[index] = { ok: true, value: item.work() };
            run('RELEASE work');
          } catch (error) {
            outcomes[index] = { ok: false, error };
            if (this.db.inTransaction) {
              run('ROLLBACK TO work');
              run('RELEASE work');
            }
          }
        }),
      );
    } catch (error) {
      commitError = error;
    }
    // Committed at NORMAL: durable work is told once the log is on the disk.
    const synced = durable && this.log && commitError === undefined ? this.log.sync() : undefined;
    batch.forEach((item, index) => {
      const outcome = outcomes[index];
      if (commitError !== undefined) item.reject(commitError);
      else if (!outcome?.ok) item.reject(outcome?.error);
      else if (synced && item.durable) synced.then(() => item.resolve(outcome.value), item.reject);
      else item.resolve(outcome.value);
    });
    for (const wake of waiting) wake();
  }

  /** Commits what is queued and closes the log's file (a later durable commit opens it again). */
  close(): void {
    this.flush();
    this.log?.close();
  }

  private push(item: Work): void {
    this.queue.push(item);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }
}

interface Work {
  readonly work: () => unknown;
  readonly durable: boolean;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}
