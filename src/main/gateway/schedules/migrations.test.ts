import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrate, openDatabase, type Db } from '../db/database';
import { homingMigrations } from '../db/migrations';
import { scheduleMigrations } from './migrations';

let dir: string;
const opened: Db[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'homing-schedule-migrations-'));
});
afterEach(() => {
  for (const db of opened.splice(0)) db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('schedule migrations', () => {
  it('are numbered schedules-NNN-name, in order, the last of homing.db', () => {
    const ids = scheduleMigrations.map((migration) => migration.id);
    ids.forEach((id, index) => expect(id).toMatch(new RegExp(`^schedules-${String(index + 1).padStart(3, '0')}-[a-z0-9-]+$`)));
    expect(homingMigrations.slice(-ids.length).map((migration) => migration.id)).toEqual(ids);
  });

  it('add the schedule tables to a database made before them, and apply nothing a second time', () => {
    const file = join(dir, 'homing.db');
    const before = homingMigrations.filter((migration) => !scheduleMigrations.includes(migration));
    openDatabase(file, { migrations: before }).close();

    const db = openDatabase(file, { migrations: homingMigrations });
    opened.push(db);
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'schedule%' ORDER BY name").all() as { name: string }[]).map((row) => row.name);
    expect(tables).toEqual(['schedule_runs', 'schedules']);
    expect(migrate(db, homingMigrations)).toEqual([]);
  });
});
