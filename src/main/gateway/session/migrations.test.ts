import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrate, openDatabase, type Db } from '../db/database';
import { homingMigrations } from '../db/migrations';
import { sessionMigrations } from './migrations';

let dir: string;
let db: Db | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'homing-session-migrations-'));
});
afterEach(() => {
  db?.close();
  db = undefined;
  rmSync(dir, { recursive: true, force: true });
});

function open(): Db {
  db = openDatabase(join(dir, 'homing.db'), { migrations: homingMigrations });
  return db;
}

describe('session migrations', () => {
  it('are numbered session-NNN-name, in order, and part of homing.db', () => {
    const ids = sessionMigrations.map((migration) => migration.id);
    ids.forEach((id, index) => expect(id).toMatch(new RegExp(`^session-${String(index + 1).padStart(3, '0')}-[a-z0-9-]+$`)));
    expect(homingMigrations.map((migration) => migration.id)).toEqual(expect.arrayContaining(ids));
  });

  it('create the index tables on a fresh database and record themselves', () => {
    const fresh = open();
    const tables = fresh.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
    expect(tables.map((table) => table.name)).toEqual(expect.arrayContaining(['sessions', 'session_keys']));
    const applied = fresh.prepare("SELECT id FROM schema_migrations WHERE id LIKE 'session-%' ORDER BY id").all() as { id: string }[];
    expect(applied.map((row) => row.id)).toEqual(sessionMigrations.map((migration) => migration.id));
  });

  it('apply nothing a second time', () => {
    const fresh = open();
    expect(migrate(fresh, homingMigrations)).toEqual([]);
  });

  it('refuse a chat type outside the union', () => {
    const fresh = open();
    expect(() =>
      fresh
        .prepare(`INSERT INTO sessions (session_id, session_key, platform, chat_type, chat_pseudonym, address, created_at, updated_at)
                  VALUES ('s', 'k', 'irc', 'broadcast', 'irc:0', '{}', 0, 0)`)
        .run(),
    ).toThrow(/CHECK constraint/);
  });
});
