import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SessionSummary } from '../../../shared/api';
import { openDatabase, type Db } from '../db/database';
import { homingMigrations } from '../db/migrations';
import { SessionIndex } from './session-index';
import { BadSessionCursorError, SessionReader } from './session-reader';

let dir: string;
let db: Db;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'homing-session-list-'));
  db = openDatabase(join(dir, 'homing.db'), { migrations: homingMigrations });
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

let made = 0;
/** A session started at `at` (its own conversation), with one user message: updated_at = at. */
function session(index: SessionIndex, at: number): string {
  const n = made++;
  const sessionId = `20260101-000000-000-${n.toString(16).padStart(10, '0')}`;
  const sessionKey = `agent:main:irc:direct:chat-${n}`;
  index.start(
    { sessionId, sessionKey, platform: 'irc', chatType: 'direct', chat: `irc:${n}`, address: { platform: 'irc', chatId: `chat-${n}`, chatType: 'direct' }, title: null, createdAt: at },
    undefined,
  );
  index.recordMessage(sessionId, 'user', at, 'hello');
  return sessionId;
}

function walk(reader: SessionReader, pageSize: number, between: () => void = () => {}): SessionSummary[][] {
  const pages = [reader.list({ pageSize })];
  between();
  while (pages.at(-1)!.nextCursor) {
    pages.push(reader.list({ pageSize, cursor: pages.at(-1)!.nextCursor! }));
    between();
  }
  pages.forEach((page, index) => expect(page.page).toBe(index + 1));
  return pages.map((page) => [...page.sessions]);
}

describe('keyset pages of the session list', () => {
  it('chain without gaps or repeats when many sessions share an updated_at, while sessions start and others get messages between reads', () => {
    const index = new SessionIndex(db);
    const reader = new SessionReader(db, dir);
    const base = Date.UTC(2026, 0, 1);
    // Nine sessions per millisecond: page boundaries fall inside ties.
    const ids = db.transaction(() => Array.from({ length: 203 }, (_, n) => session(index, base + Math.floor(n / 9))))();
    const before = walk(reader, 20).flat();
    expect(before.map((s) => s.sessionId)).toEqual([...ids].reverse());

    let later = base + 1_000;
    const seen = walk(reader, 20, () => session(index, ++later)).flat();
    expect(seen.map((s) => s.sessionId)).toEqual(before.map((s) => s.sessionId));
    const pages = walk(reader, 20);
    expect(pages.slice(0, -1).every((page) => page.length === 20)).toBe(true);
    expect(pages.flat()).toHaveLength(reader.list().total);

    // The legacy page number still reads the same rows as the walk.
    expect(reader.list({ page: 3, pageSize: 20 }).sessions.map((s) => s.sessionId)).toEqual(pages[2]!.map((s) => s.sessionId));
  });

  it('a session that moves to the top mid-walk is not read twice below the cursor', () => {
    const index = new SessionIndex(db);
    const reader = new SessionReader(db, dir);
    const base = Date.UTC(2026, 0, 1);
    const ids = Array.from({ length: 30 }, (_, n) => session(index, base + n));
    const first = reader.list({ pageSize: 10 });
    // The oldest session gets a message: it is now newer than every cursor.
    index.recordMessage(ids[0]!, 'user', base + 10_000, 'back');
    const rest = walk(reader, 10).flat();
    const second = reader.list({ pageSize: 10, cursor: first.nextCursor! });
    const third = reader.list({ pageSize: 10, cursor: second.nextCursor! });
    const walked = [...first.sessions, ...second.sessions, ...third.sessions].map((s) => s.sessionId);
    expect(new Set(walked).size).toBe(walked.length);
    expect(walked).not.toContain(ids[0]);
    expect(rest[0]!.sessionId).toBe(ids[0]);
  });

  it('seeks on sessions_by_update and joins session_keys by its session_id index', () => {
    const plan = (sql: string, ...args: unknown[]) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[]).map((row) => row.detail).join('\n');
    const joined = plan(
      `SELECT s.*, (k.session_id IS NOT NULL) AS current FROM sessions s LEFT JOIN session_keys k ON k.session_id = s.session_id
       WHERE (s.updated_at, s.session_id) < (?, ?) ORDER BY s.updated_at DESC, s.session_id DESC LIMIT ?`,
      0,
      'x',
      51,
    );
    expect(joined).toMatch(/SEARCH s USING INDEX sessions_by_update/);
    expect(joined).toMatch(/SEARCH k USING COVERING INDEX session_keys_by_session/);
    expect(joined).not.toMatch(/TEMP B-TREE|SCAN/);
  });

  it('refuses a cursor it did not make, and a cursor with a page', () => {
    const index = new SessionIndex(db);
    const reader = new SessionReader(db, dir);
    for (let n = 0; n < 5; n++) session(index, Date.UTC(2026, 0, 1) + n);
    const next = reader.list({ pageSize: 2 }).nextCursor!;
    expect(() => reader.list({ cursor: 'garbage!' })).toThrow(BadSessionCursorError);
    expect(() => reader.list({ cursor: next, page: 2 })).toThrow(BadSessionCursorError);
    expect(reader.list({ pageSize: 2, cursor: next })).toMatchObject({ page: 2, total: 5 });
  });
});
