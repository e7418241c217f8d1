import Database from 'better-sqlite3';
import { fdatasync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openTestDb, removeTempDirs, tempDir } from '../ledger/fixtures/test-ledger';
import { openDatabase } from './database';
import { CommitGroup } from './commit-group';
import { LogNotDurableError, LogSync } from './log-sync';
import type { SyncFile } from './shared-sync';

afterEach(removeTempDirs);

describe.runIf(process.platform === 'linux')('log sync', () => {
  it('shares syncs: while one runs, every caller waits for one more, started after it', async () => {
    const db = openTestDb(join(tempDir(), 'homing.db'), 50);
    db.exec('CREATE TABLE t (v TEXT)');
    const log = LogSync.forDatabase(db)!;
    const first = log.sync();
    const second = log.sync();
    const third = log.sync();
    expect(second).toBe(third); // one more sync covers both
    expect(second).not.toBe(first);
    const settled: string[] = [];
    await Promise.all([first.then(() => settled.push('first')), second.then(() => settled.push('second'))]);
    expect(settled).toEqual(['first', 'second']); // the shared one started after the running one ended
    // Nothing running: a new sync starts at once.
    const fourth = log.sync();
    expect(fourth).not.toBe(second);
    await fourth;
    log.close();
    db.close();
  });

  it('closes its file only once the syncs asked for are done (a stop while a reply waits for the disk)', async () => {
    const db = openTestDb(join(tempDir(), 'homing.db'), 50);
    db.exec('CREATE TABLE t (v TEXT)');
    const log = LogSync.forDatabase(db)!;
    const fds = () => readdirSync('/proc/self/fd').length;
    const before = fds();
    const running = log.sync();
    const next = log.sync();
    expect(fds()).toBe(before + 1);
    log.close();
    await expect(Promise.all([running, next])).resolves.toBeDefined(); // neither saw its descriptor closed under it
    await new Promise((resolve) => setImmediate(resolve));
    expect(fds()).toBe(before);
    db.close();
  });

  it('stands in for FULL only for a WAL database on disk', () => {
    const memory = openDatabase(':memory:', { migrations: [] });
    expect(LogSync.forDatabase(memory)).toBeUndefined();
    memory.close();
    const rollback = openDatabase(join(tempDir(), 'rollback.db'), { migrations: [] });
    rollback.pragma('journal_mode = DELETE');
    expect(LogSync.forDatabase(rollback)).toBeUndefined();
    rollback.close();
  });

  describe('a disk that fails one fdatasync', () => {
    /** The real fdatasync, except the ones the test makes fail (an EIO, as a dying disk gives). */
    function failingDisk() {
      let failures = 0;
      const calls: number[] = [];
      const sync: SyncFile = (fd, done) => {
        calls.push(fd);
        if (failures > 0) {
          failures--;
          setImmediate(() => done(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })));
          return;
        }
        fdatasync(fd, done);
      };
      return { sync, calls, failNext: (n = 1) => void (failures = n) };
    }

    function groupOn(disk: ReturnType<typeof failingDisk>) {
      const db = openTestDb(join(tempDir(), 'homing.db'), 50);
      db.exec('CREATE TABLE t (v TEXT)');
      const insert = (v: string) => () => db.prepare('INSERT INTO t (v) VALUES (?)').run(v);
      return { db, group: new CommitGroup(db, { fdatasync: disk.sync }), insert };
    }

    it('reports no later commit durable, though later fdatasyncs succeed, until the log is healed', async () => {
      const disk = failingDisk();
      const { db, group, insert } = groupOn(disk);
      await group.durable(insert('before'));
      disk.failNext();
      await expect(group.durable(insert('lost?'))).rejects.toThrow(/EIO/);
      expect(group.diskFailing?.message).toMatch(/EIO/);
      // The disk answers again, but what it dropped is not known to be on it: a reader holds the log, so no heal.
      const reader = new Database(db.name);
      reader.exec('BEGIN');
      reader.prepare('SELECT count(*) FROM t').get();
      const later = await group.committed(insert('after'));
      await expect(later.onDisk).rejects.toBeInstanceOf(LogNotDurableError);
      await expect(later.onDisk).rejects.toThrow(/another connection is reading the log/);
      expect(group.diskFailing).toBeDefined();
      reader.exec('COMMIT');
      reader.close();
      // Healed: the log emptied into the database, both files synced through fresh descriptors.
      const syncsBefore = disk.calls.length;
      await group.durable(insert('healed'));
      expect(group.diskFailing).toBeUndefined();
      expect(disk.calls.length - syncsBefore).toBeGreaterThanOrEqual(2);
      expect(db.pragma('wal_checkpoint(PASSIVE)')).toEqual([{ busy: 0, log: 0, checkpointed: 0 }]);
      await group.durable(insert('normal again'));
      expect(db.prepare('SELECT v FROM t').pluck().all()).toEqual(['before', 'lost?', 'after', 'healed', 'normal again']);
      group.close();
      db.close();
    });

    it('reports nothing durable for a sync asked for while the failing one ran, though its own fdatasync would succeed', async () => {
      const disk = failingDisk();
      const db = openTestDb(join(tempDir(), 'homing.db'), 50);
      db.exec('CREATE TABLE t (v TEXT)');
      const log = LogSync.forDatabase(db, { fdatasync: disk.sync })!;
      // A reader holds the log: no heal can succeed meanwhile.
      const reader = new Database(db.name);
      reader.exec('BEGIN');
      reader.prepare('SELECT count(*) FROM t').get();
      disk.failNext();
      db.prepare('INSERT INTO t (v) VALUES (?)').run('a');
      const failing = log.sync();
      db.prepare('INSERT INTO t (v) VALUES (?)').run('b');
      const queued = log.sync(); // shares the sync that starts once the failing one ends
      await expect(failing).rejects.toThrow(/EIO/);
      await expect(queued).rejects.toBeInstanceOf(LogNotDurableError);
      expect(disk.calls).toHaveLength(1); // no plain fdatasync after the failure: only a heal may say durable again
      reader.exec('COMMIT');
      reader.close();
      await log.sync(); // healed
      expect(log.failing).toBeUndefined();
      log.close();
      db.close();
    });

    it('stays failing while the heal’s own sync fails', async () => {
      const disk = failingDisk();
      const { db, group, insert } = groupOn(disk);
      disk.failNext(2); // the failing sync, then the heal's sync of the database file
      await expect(group.durable(insert('a'))).rejects.toThrow(/EIO/);
      await expect(group.durable(insert('b'))).rejects.toThrow(/homing\.db could not be synced/);
      expect(group.diskFailing).toBeDefined();
      await group.durable(insert('c'));
      expect(group.diskFailing).toBeUndefined();
      group.close();
      db.close();
    });
  });
});
