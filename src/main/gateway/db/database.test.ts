import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DatabaseError, durably, openDatabase, type Migration } from './database';
import { homingMigrations } from './migrations';

describe('openDatabase', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'homing-db-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const table = (id: string, name: string): Migration => ({ id, up: (db) => db.exec(`CREATE TABLE ${name} (x INTEGER)`) });

  it('applies each migration once, in order, and records it', () => {
    const file = join(dir, 'homing.db');
    const first = openDatabase(file, { migrations: [table('a-001', 'one')] });
    first.close();
    const second = openDatabase(file, { migrations: [table('a-001', 'one'), table('a-002', 'two')] });
    const ids = (second.prepare('SELECT id FROM schema_migrations ORDER BY rowid').all() as { id: string }[]).map((row) => row.id);
    expect(ids).toEqual(['a-001', 'a-002']);
    second.close();
  });

  it('uses WAL at synchronous=NORMAL, commits `durably` at FULL, and makes a file only the user can read', () => {
    const file = join(dir, 'homing.db');
    const db = openDatabase(file, { migrations: homingMigrations });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(1);
    expect(durably(db, () => db.pragma('synchronous', { simple: true }))).toBe(2);
    expect(db.pragma('synchronous', { simple: true })).toBe(1);
    expect(() => durably(db, () => { throw new Error('boom'); })).toThrow('boom');
    expect(db.pragma('synchronous', { simple: true })).toBe(1);
    db.close();
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('rolls back a failing migration and names the database', () => {
    const file = join(dir, 'homing.db');
    const broken: Migration = {
      id: 'a-001',
      up: (db) => {
        db.exec('CREATE TABLE half (x INTEGER)');
        db.exec('THIS IS NOT SQL');
      },
    };
    expect(() => openDatabase(file, { migrations: [broken] })).toThrow(DatabaseError);
    const db = openDatabase(file, { migrations: [] });
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'half'").get()).toBeUndefined();
    db.close();
  });

  it('refuses a database written by a newer Homing', () => {
    const file = join(dir, 'homing.db');
    openDatabase(file, { migrations: [table('a-001', 'one'), table('a-002', 'two')] }).close();
    expect(() => openDatabase(file, { migrations: [table('a-001', 'one')] })).toThrow(/newer Homing.*a-002/);
  });

  it('turns a corrupt file into a clear error', () => {
    const file = join(dir, 'homing.db');
    writeFileSync(file, 'this is not a database, just some text that is long enough'.repeat(100));
    expect(() => openDatabase(file, { migrations: homingMigrations })).toThrow(/homing\.db is unusable: file is not a database/);
  });

  it('has unique migration ids across modules', () => {
    const ids = homingMigrations.map((migration) => migration.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBeGreaterThan(0);
  });
});
