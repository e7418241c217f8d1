import Database from 'better-sqlite3';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openTestDb, removeTempDirs, tempDir } from '../ledger/fixtures/test-ledger';
import { CommitGroup, LATER_MS } from './commit-group';
import type { Db } from './database';
import { LogSync } from './log-sync';

afterEach(() => {
  vi.useRealTimers();
  removeTempDirs();
});

function table(): Db {
  const db = openTestDb(join(tempDir(), 'homing.db'), 50);
  db.exec('CREATE TABLE t (v TEXT NOT NULL UNIQUE)');
  return db;
}

const values = (db: Db) => (db.prepare('SELECT v FROM t ORDER BY rowid').all() as { v: string }[]).map((row) => row.v);

describe('group commit', () => {
  // On Linux durable work is committed at NORMAL and the log fdatasynced off the event loop (log-sync.ts); elsewhere at FULL.
  const DURABLE_LEVEL = process.platform === 'linux' ? 1 : 2;

  it('commits the work of one event-loop turn in one transaction, durably when any of it is durable', async () => {
    const db = table();
    const group = new CommitGroup(db);
    const levels: number[] = [];
    const insert = (v: string) => () => {
      levels.push(db.pragma('synchronous', { simple: true }) as number);
      db.prepare('INSERT INTO t (v) VALUES (?)').run(v);
      return v;
    };
    group.later(insert('mark'));
    const results = Promise.all([group.durable(insert('a')), group.durable(insert('b'))]);
    expect(values(db)).toEqual([]); // nothing before the flush
    expect(await results).toEqual(['a', 'b']);
    expect(values(db)).toEqual(['mark', 'a', 'b']);
    expect(levels).toEqual([DURABLE_LEVEL, DURABLE_LEVEL, DURABLE_LEVEL]);
    expect(db.inTransaction).toBe(false);
    expect(db.pragma('synchronous', { simple: true })).toBe(1);

    // Only bookkeeping queued: committed at NORMAL.
    levels.length = 0;
    group.later(insert('c'));
    await group.flushed();
    expect(levels).toEqual([1]);
    db.close();
  });

  it('fails a piece of work that throws alone, rolled back to its savepoint', async () => {
    const db = table();
    const group = new CommitGroup(db);
    const errors: unknown[] = [];
    const good = group.durable(() => db.prepare('INSERT INTO t (v) VALUES (?)').run('x'));
    const bad = group.durable(() => {
      db.prepare('INSERT INTO t (v) VALUES (?)').run('half');
      db.prepare('INSERT INTO t (v) VALUES (?)').run('x'); // UNIQUE: throws
    });
    group.later(() => db.prepare('INSERT INTO t (v) VALUES (?)').run('y'), (error) => errors.push(error));
    // The failed piece is told at the commit, the good one once it is on disk: hear both.
    const [goodOutcome, badOutcome] = await Promise.allSettled([good, bad]);
    expect(goodOutcome.status).toBe('fulfilled');
    expect(badOutcome.status === 'rejected' && String(badOutcome.reason)).toMatch(/UNIQUE/);
    expect(values(db)).toEqual(['x', 'y']);
    expect(errors).toEqual([]);
    db.close();
  });

  it('runs one-write work without a savepoint: its failing statement is undone by SQLite alone, and fails alone', async () => {
    const db = table();
    const group = new CommitGroup(db);
    // A fresh connection: the group prepares `SAVEPOINT work` the first time it opens one.
    const prepared = vi.spyOn(db, 'prepare');
    const errors: unknown[] = [];
    const good = group.committed(() => db.prepare('INSERT INTO t (v) VALUES (?)').run('x'), { oneWrite: true });
    // A multi-row statement that fails on its second row: SQLite undoes its first too.
    group.later(() => db.prepare(`INSERT INTO t (v) VALUES ('z'), ('x')`).run(), (error) => errors.push(error), { oneWrite: true });
    group.later(() => db.prepare('INSERT INTO t (v) VALUES (?)').run('y'), undefined, { oneWrite: true });
    await good;
    await group.flushed();
    expect(values(db)).toEqual(['x', 'y']);
    expect(String(errors[0])).toMatch(/UNIQUE/);
    expect(errors).toHaveLength(1);
    expect(prepared.mock.calls.map(([sql]) => sql)).not.toContain('SAVEPOINT work');
    db.close();
  });

  it('fails every piece of work, and runs none after it, when a failure rolled the whole transaction back', async () => {
    const db = table();
    const group = new CommitGroup(db);
    const errors: unknown[] = [];
    const before = group.durable(() => db.prepare('INSERT INTO t (v) VALUES (?)').run('a'));
    // What SQLite does on SQLITE_FULL or an I/O error inside a transaction: it rolls it all back.
    const failing = group.committed(
      () => {
        db.exec('ROLLBACK');
        throw new Error('database or disk is full');
      },
      { oneWrite: true },
    );
    let ranAfter = false;
    group.later(
      () => {
        ranAfter = true;
        db.prepare('INSERT INTO t (v) VALUES (?)').run('c');
      },
      (error) => errors.push(error),
      { oneWrite: true },
    );
    const outcomes = await Promise.allSettled([before, failing]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    expect(errors.map(String)).toEqual(['Error: database or disk is full']);
    expect(ranAfter).toBe(false);
    expect(values(db)).toEqual([]);
    expect(db.inTransaction).toBe(false);
    // The group goes on with the next batch.
    await group.durable(() => db.prepare('INSERT INTO t (v) VALUES (?)').run('d'));
    expect(values(db)).toEqual(['d']);
    db.close();
  });

  it('fails the batch too when the work caught the failure that rolled the transaction back', async () => {
    const db = table();
    const group = new CommitGroup(db);
    const errors: unknown[] = [];
    // Like the ledger's delivered mark, whose move to the history swallows its own failure.
    group.later(
      () => {
        db.prepare('INSERT INTO t (v) VALUES (?)').run('marked');
        try {
          db.exec('ROLLBACK');
          throw new Error('database or disk is full');
        } catch {
          // the work goes on as if only its extra had failed
        }
      },
      (error) => errors.push(error),
      { oneWrite: true },
    );
    const after = group.durable(() => db.prepare('INSERT INTO t (v) VALUES (?)').run('after'));
    await expect(after).rejects.toThrow(/rolled back/);
    expect(errors.map(String)).toEqual([expect.stringMatching(/rolled back/)]);
    expect(values(db)).toEqual([]);
    db.close();
  });

  it('fails every piece of work when the commit itself cannot happen (the database is locked)', async () => {
    const db = table();
    const file = db.name;
    const locker = new Database(file);
    locker.exec('BEGIN EXCLUSIVE');
    const group = new CommitGroup(db);
    const errors: unknown[] = [];
    const durable = group.durable(() => db.prepare('INSERT INTO t (v) VALUES (?)').run('a'));
    group.later(() => db.prepare('INSERT INTO t (v) VALUES (?)').run('b'), (error) => errors.push(error));
    await expect(durable).rejects.toThrow(/locked|busy/i);
    await group.flushed();
    expect(errors).toHaveLength(1);
    locker.exec('ROLLBACK');
    locker.close();
    expect(values(db)).toEqual([]);
    expect(db.inTransaction).toBe(false);
    expect(db.pragma('synchronous', { simple: true })).toBe(1);
    db.close();
  });

  it.runIf(process.platform === 'linux')('tells durable work only once the log is fdatasynced, and fails it when the log cannot be', async () => {
    const db = table();
    const group = new CommitGroup(db);
    const order: string[] = [];
    const durable = group.durable(() => db.prepare('INSERT INTO t (v) VALUES (?)').run('a')).then(() => order.push('durable'));
    group.later(() => void db.prepare('INSERT INTO t (v) VALUES (?)').run('b'));
    await group.flushed().then(() => order.push('committed'));
    await durable;
    expect(order).toEqual(['committed', 'durable']);

    // The log is gone (unlinked under the connection): the commit stands, but durable work hears it is not on disk.
    group.close();
    rmSync(`${db.name}-wal`);
    await expect(group.durable(() => db.prepare('INSERT INTO t (v) VALUES (?)').run('c'))).rejects.toThrow(/ENOENT/);
    db.close();
  });

  it('tells `committed` work at the commit, with the promise of the disk', async () => {
    const db = table();
    const group = new CommitGroup(db);
    const order: string[] = [];
    const { value, onDisk } = await group.committed(() => {
      db.prepare('INSERT INTO t (v) VALUES (?)').run('a');
      return 'a';
    });
    order.push('committed');
    expect(value).toBe('a');
    expect(values(db)).toEqual(['a']);
    await onDisk.then(() => order.push('on disk'));
    expect(order).toEqual(['committed', 'on disk']);

    // A commit that fails fails it at once; a vanished log fails only its disk promise.
    if (process.platform === 'linux') {
      group.close();
      rmSync(`${db.name}-wal`);
      const lost = await group.committed(() => db.prepare('INSERT INTO t (v) VALUES (?)').run('b'));
      await expect(lost.onDisk).rejects.toThrow(/ENOENT/);
    }
    await expect(group.committed(() => db.prepare('INSERT INTO t (v) VALUES (?)').run('a'))).rejects.toThrow(/UNIQUE/);
    db.close();
  });

  it('runs `soon` work on the next turn, after what is queued before it, in its transaction, with no fdatasync of its own', async () => {
    const db = table();
    const group = new CommitGroup(db);
    const sync = LogSync.prototype.sync;
    let syncs = 0;
    LogSync.prototype.sync = function (this: LogSync) {
      syncs++;
      return sync.call(this);
    };
    try {
      const other = new Database(db.name);
      group.later(() => db.prepare('INSERT INTO t (v) VALUES (?)').run('mark'));
      // It sees what was queued before it (a lane reading its conversation's next reply after the last one's mark)…
      const seen = group.soon(() => ({ here: values(db), elsewhere: values(other) }));
      expect(await seen).toEqual({ here: ['mark'], elsewhere: [] });
      expect(values(other)).toEqual(['mark']); // …committed with it
      expect(syncs).toBe(0);
      await expect(group.soon(() => db.prepare('INSERT INTO t (v) VALUES (?)').run('mark'))).rejects.toThrow(/UNIQUE/);
      other.close();
    } finally {
      LogSync.prototype.sync = sync;
    }
    db.close();
  });

  it('lets bookkeeping alone wait LATER_MS for a durable write to commit with, unless someone waits for it', async () => {
    const db = table();
    const group = new CommitGroup(db);
    const other = new Database(db.name);
    const seenElsewhere: string[][] = [];
    const insert = (v: string) => () => {
      db.prepare('INSERT INTO t (v) VALUES (?)').run(v);
    };
    // The LATER_MS timer is the test's to move: on a loaded machine 2 ms can pass before the next turn.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    // Alone, a mark waits: nothing is committed on the next turn of the event loop…
    group.later(insert('mark'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(values(db)).toEqual([]);
    // …and a reply recorded meanwhile commits with it, in one transaction, in the order queued.
    await group.durable(() => {
      seenElsewhere.push(values(other));
      insert('reply')();
    });
    expect(seenElsewhere).toEqual([[]]); // the mark was not committed on its own before the reply
    expect(values(db)).toEqual(['mark', 'reply']);
    other.close();

    // With nothing else coming it commits after LATER_MS, not before.
    group.later(insert('late'));
    const flushed = group.flushed({ hurry: false });
    await vi.advanceTimersByTimeAsync(LATER_MS - 1);
    expect(values(db)).toEqual(['mark', 'reply']);
    await vi.advanceTimersByTimeAsync(1);
    await flushed;
    expect(values(db)).toEqual(['mark', 'reply', 'late']);
    vi.useRealTimers();

    // Someone waiting for the commit (a lane about to read the ledger) has it on the next turn.
    group.later(insert('waited'));
    let committed = false;
    const waited = group.flushed().then(() => (committed = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(committed).toBe(true);
    await waited;
    expect(values(db)).toEqual(['mark', 'reply', 'late', 'waited']);
    db.close();
  });
});
