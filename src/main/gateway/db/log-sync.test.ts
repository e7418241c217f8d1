import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openTestDb, removeTempDirs, tempDir } from '../ledger/fixtures/test-ledger';
import { openDatabase } from './database';
import { LogSync } from './log-sync';

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
});
