import { cachedStatement, durably, transact, type Db } from './database';
import { LogSync, type LogSyncOptions } from './log-sync';

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
 *  - `committed`: durable work whose caller may go on at the commit and waits
 *    for the disk only where it must (a reply recorded: the next turn may read
 *    it at once; its send waits for `onDisk`).
 *  - `soon`: work whose caller waits for the commit but not for the disk.
 *  - `later`: bookkeeping after the fact (a delivered mark, a session's
 *    counters). Committed in the same transaction as whatever else is queued,
 *    at NORMAL when nothing durable is: it survives the process being killed as
 *    soon as it is committed (the OS has the WAL) and a power cut once the next
 *    FULL commit or checkpoint fsyncs the WAL.
 *
 * Each piece of work runs in its own savepoint: one that throws is rolled back
 * alone and fails alone — but bookkeeping that writes with one statement,
 * which SQLite undoes by itself when it fails, runs without one (`oneWrite`).
 * A commit that fails fails every piece in it, and so does a piece whose
 * failure made SQLite roll the whole transaction back (nothing after it runs).
 * Everything queued runs in the order it was queued.
 */
export class CommitGroup {
  private queue: Work[] = [];
  /** How the next flush is scheduled: on the next turn of the event loop, or (bookkeeping alone) after LATER_MS. */
  private scheduled: 'soon' | 'later' | undefined;
  private timer: NodeJS.Timeout | undefined;
  private waiting: (() => void)[] = [];
  private readonly log: LogSync | undefined;

  constructor(
    private readonly db: Db,
    /** How the log is synced (a test's failing disk); see log-sync.ts. */
    options: LogSyncOptions = {},
  ) {
    this.log = LogSync.forDatabase(db, options);
  }

  /** The disk's error while the log is failing: nothing committed is reported durable until it heals (log-sync.ts). */
  get diskFailing(): Error | undefined {
    return this.log?.failing;
  }

  /** Runs `work` in the next group commit, fsynced; resolves with its result once committed. */
  durable<T>(work: () => T): Promise<T> {
    return this.committed(work).then(({ value, onDisk }) => onDisk.then(() => value));
  }

  /**
   * Runs `work` in the next group commit, fsynced like `durable`, but resolves
   * at the commit: with its result and `onDisk`, which settles once the commit
   * is on the disk (rejects if the disk said no). Whatever must not happen
   * before a power cut could no longer undo the work waits for `onDisk`.
   * `oneWrite`: as for `later`.
   */
  committed<T>(work: () => T, options: WorkOptions = {}): Promise<{ readonly value: T; readonly onDisk: Promise<void> }> {
    return new Promise((resolve, reject) => {
      this.push({ work, durable: true, resolve: resolve as (value: unknown) => void, reject, savepoint: options.oneWrite !== true });
    });
  }

  /**
   * Runs `work` in the next group commit, made on the next turn of the event
   * loop, and resolves with its result at the commit. Not fsynced on its own
   * account: for a write that only has to follow what is queued before it (a
   * conversation's next reply claimed in the commit that marks the last one
   * delivered), not survive a power cut.
   */
  soon<T>(work: () => T): Promise<T> {
    return new Promise((resolve, reject) => {
      this.push({ work, durable: false, resolve: resolve as (value: unknown) => void, reject, savepoint: true }, 'soon');
    });
  }

  /**
   * Runs `work` in the next group commit; `onError` hears if it (or the commit)
   * failed. `oneWrite`: the work writes with one statement at most (or opens
   * its own transaction for anything more), and nothing after that statement
   * can throw — it needs no savepoint of its own: a failing statement is
   * undone by SQLite, and it is the work's last step.
   */
  later(work: () => void, onError?: (error: unknown) => void, options: WorkOptions = {}): void {
    this.push({ work, durable: false, resolve: () => {}, reject: onError ?? (() => {}), savepoint: options.oneWrite !== true });
  }

  /**
   * Resolves after the next flush (at once when nothing is queued), which is
   * then made on the next turn of the event loop; `hurry: false` leaves it when
   * it was due (LATER_MS for bookkeeping alone).
   */
  flushed(options: { readonly hurry?: boolean } = {}): Promise<void> {
    if (this.queue.length === 0) return Promise.resolve();
    // Someone waits for it: bookkeeping does not wait for company, unless the waiter is in no hurry.
    if (options.hurry ?? true) this.schedule('soon');
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Commits everything queued now (also called by the scheduler). */
  flush(): void {
    this.scheduled = undefined;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
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
          if (item.savepoint) run('SAVEPOINT work');
          try {
            outcomes[index] = { ok: true, value: item.work() };
            if (item.savepoint) run('RELEASE work');
          } catch (error) {
            outcomes[index] = { ok: false, error };
            if (item.savepoint && this.db.inTransaction) {
              run('ROLLBACK TO work');
              run('RELEASE work');
            }
          }
          // SQLite rolled the whole transaction back (a full disk, an I/O error — also under
          // work that caught the error itself): what ran before is gone too, and what follows
          // must not run outside it, in commits of its own. The batch fails as a commit
          // fails: every piece of it.
          if (!this.db.inTransaction) {
            const outcome = outcomes[index]!;
            throw outcome.ok ? new Error('the group commit was rolled back under a piece of work (the disk failed)') : outcome.error;
          }
        }),
      );
    } catch (error) {
      commitError = error;
    }
    // Committed at NORMAL: durable work is told once the log is on the disk.
    const synced = durable && this.log && commitError === undefined ? this.log.sync() : undefined;
    // Durable work is told at the commit, with the promise of the disk (a caller may not wait for it).
    synced?.catch(() => {});
    const onDisk = synced ?? Promise.resolve();
    batch.forEach((item, index) => {
      const outcome = outcomes[index];
      if (commitError !== undefined) item.reject(commitError);
      else if (!outcome?.ok) item.reject(outcome?.error);
      else item.resolve(item.durable ? { value: outcome.value, onDisk } : outcome.value);
    });
    for (const wake of waiting) wake();
  }

  /** Commits what is queued and closes the log's file (a later durable commit opens it again). */
  close(): void {
    this.flush();
    this.log?.close();
  }

  /** Queues `item`; durable work is committed on the next turn, bookkeeping alone after LATER_MS. */
  private push(item: Work, when: 'soon' | 'later' = item.durable ? 'soon' : 'later'): void {
    this.queue.push(item);
    this.schedule(when);
  }

  private schedule(when: 'soon' | 'later'): void {
    if (this.scheduled === 'soon' || this.scheduled === when) return;
    if (when === 'later') {
      this.scheduled = 'later';
      this.timer = setTimeout(() => this.flush(), LATER_MS);
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.scheduled = 'soon';
    setImmediate(() => {
      if (this.scheduled === 'soon') this.flush();
    });
  }
}

/**
 * How long bookkeeping alone waits for company: a reply recorded meanwhile (the
 * next turn of a busy conversation) commits with it, in one transaction that
 * writes each shared page once. Short, because a process killed meanwhile
 * loses what waits (a chunk then goes again, with the resend marker).
 */
export const LATER_MS = 2;

interface WorkOptions {
  /** The work writes with one statement at most and cannot throw after it: no savepoint of its own (see `later`). */
  readonly oneWrite?: boolean;
}

interface Work {
  readonly work: () => unknown;
  /** Durable work is resolved at the commit with `{ value, onDisk }` (see `committed`). */
  readonly durable: boolean;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  /** Whether it runs in a savepoint of its own (see `later`'s `oneWrite`). */
  readonly savepoint: boolean;
}
