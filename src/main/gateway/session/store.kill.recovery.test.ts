import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../db/database';
import { homingMigrations } from '../db/migrations';
import { startChild } from './fixtures/run-child';
import { CHILD_SOURCE, turnText } from './fixtures/child-source';
import { loadOrCreateInstallSecret } from './install-secret';
import { createPseudonymiser } from './pseudonyms';
import { SessionStore } from './store';
import { parseRecord } from './transcript-record';
import { unanswered } from '../pipeline/recovery';

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const step of cleanup.splice(0).reverse()) step();
});

function dataDirectory(): string {
  const dir = mkdtempSync(join(tmpdir(), 'homing-kill-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function reopen(dataDir: string): SessionStore {
  const db: Db = openDatabase(join(dataDir, 'homing.db'), { migrations: homingMigrations });
  cleanup.push(() => db.close());
  return new SessionStore({ db, dataDir, pseudonyms: createPseudonymiser(loadOrCreateInstallSecret(dataDir)) });
}

/** Every line of the file is a complete, parseable record. */
function expectWholeLines(path: string): void {
  const text = readFileSync(path, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  for (const line of text.slice(0, -1).split('\n')) expect(parseRecord(line)).toBeDefined();
}

describe('kill -9 in the middle of appends', () => {
  it('keeps every turn whose append returned, and leaves a transcript the next run can append to', async () => {
    const dataDir = dataDirectory();
    // Big turns, so the kill is likely to land inside a write.
    const chars = 256 * 1024;
    const child = startChild(['append-forever', dataDir, String(chars)]);
    const sessionId = (await child.waitForLine((line) => line.startsWith('session '))).slice('session '.length);
    await child.waitForLine((line) => line === 'ack 20');
    child.process.kill('SIGKILL');
    const { signal } = await child.exited;
    expect(signal).toBe('SIGKILL');
    const acked = Math.max(...child.lines.filter((line) => line.startsWith('ack ')).map((line) => Number(line.slice(4))));
    expect(acked).toBeGreaterThanOrEqual(20);

    const store = reopen(dataDir);
    const turns = store.loadContext(sessionId, { maxTurns: 10_000 }).turns;
    // Every acknowledged turn, in order and intact; at most one more that was written but not yet acknowledged.
    expect(turns.length === acked + 1 || turns.length === acked + 2).toBe(true);
    turns.forEach((turn, i) => expect(turn.text).toBe(turnText(i, chars)));

    expectWholeLines(store.transcriptPath(sessionId));
    store.appendUserTurn(sessionId, { source: CHILD_SOURCE, text: 'after the crash' });
    expect(store.loadContext(sessionId, { maxTurns: 1 }).turns[0]?.text).toBe('after the crash');
    expectWholeLines(store.transcriptPath(sessionId));
  });

  it('never leaves a saved, unanswered message where the index says nothing waits (group commit, kills at random)', async () => {
    for (let round = 0; round < 4; round++) {
      const dataDir = dataDirectory();
      const child = startChild(['converse-forever', dataDir]);
      const sessionId = (await child.waitForLine((line) => line.startsWith('session '))).slice('session '.length);
      const killAt = 20 + Math.floor(Math.random() * 300);
      await child.waitForLine((line) => line === `ack ${killAt}`);
      child.process.kill('SIGKILL');
      expect((await child.exited).signal).toBe('SIGKILL');

      const store = reopen(dataDir);
      const turns = store.loadContext(sessionId, { maxTurns: 10_000 }).turns;
      expect(turns.length).toBeGreaterThan(killAt);
      const waiting = store.waitingSince(Date.now() - 3_600_000, { powerLoss: false }).map((s) => s.sessionId);
      if (unanswered(turns).length > 0) expect(waiting, `round ${round}, killed after ack ${killAt}`).toEqual([sessionId]);
    }
  });

  it('ignores a turn torn by the kill and repairs the file on load', async () => {
    const dataDir = dataDirectory();
    const child = startChild(['tear', dataDir, '5']);
    const sessionId = (await child.waitForLine((line) => line.startsWith('torn '))).slice('torn '.length);
    child.process.kill('SIGKILL');
    expect((await child.exited).signal).toBe('SIGKILL');

    const store = reopen(dataDir);
    const path = store.transcriptPath(sessionId);
    const tornSize = statSync(path).size;
    expect(readFileSync(path, 'utf8').endsWith('half a tu')).toBe(true);

    const turns = store.loadContext(sessionId, { maxTurns: 100 }).turns;
    expect(turns.map((turn) => turn.text)).toEqual([0, 1, 2, 3, 4].map((i) => turnText(i)));
    expect(statSync(path).size).toBe(tornSize - '{"type":"user","at":1,"sender":{"id":"user_0123456789ab"},"text":"half a tu'.length);
    expectWholeLines(path);
  });
});
