import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate } from '../db/database';
import { homingMigrations } from '../db/migrations';
import { ledgerMigrations } from './migrations';
import { claim, ManualClock, openTestDb, removeTempDirs, reply, tempDir, testLedger } from './fixtures/test-ledger';
import { join } from 'node:path';

afterEach(removeTempDirs);

describe('ledger migrations', () => {
  it('are numbered in order under the ledger- prefix, each id unique', () => {
    const ids = ledgerMigrations.map((migration) => migration.id);
    expect(new Set(ids).size).toBe(ids.length);
    ids.forEach((id, index) => expect(id).toMatch(new RegExp(`^ledger-${String(index + 1).padStart(3, '0')}-[a-z-]+$`)));
  });

  it('apply one by one on a fresh database, and each leaves a usable schema', () => {
    const db = new Database(join(tempDir(), 'steps.db'));
    for (let count = 1; count <= ledgerMigrations.length; count++) {
      const ran = migrate(db, ledgerMigrations.slice(0, count));
      expect(ran).toEqual([ledgerMigrations[count - 1]!.id]);
    }
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((row) => row.name);
    expect(tables).toEqual(expect.arrayContaining(['ledger_instances', 'ledger_outbox', 'ledger_history', 'ledger_meta']));
    expect(tables).not.toContain('ledger_obligations');
    db.close();
  });

  it('are applied once: reopening the database runs nothing', () => {
    const file = join(tempDir(), 'homing.db');
    openTestDb(file).close();
    const db = new Database(file);
    expect(migrate(db, homingMigrations)).toEqual([]);
    db.close();
  });

  it('commit at synchronous = FULL what must survive a power cut before Homing acts on it, the rest at NORMAL', () => {
    const db = openTestDb();
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    // Every transaction's level as the ledger's verbs open them (db/database.ts transact).
    const levels: number[] = [];
    const prepare = db.prepare.bind(db);
    db.prepare = ((sql: string) => {
      const statement = prepare(sql);
      if (sql === 'BEGIN IMMEDIATE') {
        const run = statement.run.bind(statement);
        statement.run = ((...args: unknown[]) => {
          levels.push(db.pragma('synchronous', { simple: true }) as number);
          return run(...args);
        }) as typeof statement.run;
      }
      return statement;
    }) as typeof db.prepare;
    const clock = new ManualClock();
    const ledger = testLedger(db, clock);
    const levelOf = (call: () => unknown): number => {
      levels.length = 0;
      call();
      return levels[0]!;
    };
    expect(levelOf(() => ledger.recordObligation(reply(1)))).toBe(2); // recorded before it is sent
    const held = claim(ledger, reply(1).obligationId);
    expect(levelOf(() => ledger.markChunkSending(held.receipt, 0))).toBe(2); // "on its way" before it goes
    expect(levelOf(() => ledger.markDelivered(held.receipt, { index: 0, platformMessageId: 'm' }))).toBe(1); // after the fact
    ledger.recordObligation(reply(2));
    expect(levelOf(() => ledger.discardDelivery(reply(2).obligationId))).toBe(2); // the user's decision
    db.close();
  });

  it('reject a reply in an unknown state, and a second row with an id the outbox has', () => {
    const db = openTestDb();
    const insert = db.prepare(
      `INSERT INTO ledger_outbox (id, session_key, platform, chat_id, content, state, created_at, updated_at, chunk_count)
       VALUES (?, 'k', 'irc', 'c', 'x', ?, 0, 0, 1)`,
    );
    expect(() => insert.run('a', 'lost')).toThrow(/CHECK constraint/);
    insert.run('b', 'pending');
    expect(() => insert.run('b', 'pending')).toThrow(/UNIQUE constraint/);
    db.close();
  });
});
