import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrate, openDatabase, type Db } from '../db/database';
import { homingMigrations } from '../db/migrations';
import { agentMigrations } from './migrations';

let dir: string;
const opened: Db[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'homing-agent-migrations-'));
});
afterEach(() => {
  for (const db of opened.splice(0)) db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('agent migrations', () => {
  it('are numbered agents-NNN-name, in order, one after another in homing.db', () => {
    const ids = agentMigrations.map((migration) => migration.id);
    ids.forEach((id, index) => expect(id).toMatch(new RegExp(`^agents-${String(index + 1).padStart(3, '0')}-[a-z0-9-]+$`)));
    const all = homingMigrations.map((migration) => migration.id);
    const first = all.indexOf(ids[0]!);
    expect(all.slice(first, first + ids.length)).toEqual(ids);
  });

  it('add the agent_processes table to a database made before it, and apply nothing a second time', () => {
    const file = join(dir, 'homing.db');
    const before = homingMigrations.filter((migration) => !agentMigrations.includes(migration));
    openDatabase(file, { migrations: before }).close();

    const db = openDatabase(file, { migrations: homingMigrations });
    opened.push(db);
    const columns = (db.prepare('PRAGMA table_info(agent_processes)').all() as { name: string }[]).map((column) => column.name);
    expect(columns).toEqual(['id', 'pid', 'process_start', 'boot_id', 'owner_pid', 'owner_start', 'command', 'started_at']);
    expect(migrate(db, homingMigrations)).toEqual([]);
  });
});
