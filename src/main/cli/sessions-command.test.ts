import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SessionPage } from '../../shared/api';
import { openDatabase } from '../gateway/db/database';
import { homingMigrations } from '../gateway/db/migrations';
import { loadOrCreateInstallSecret } from '../gateway/session/install-secret';
import { createPseudonymiser } from '../gateway/session/pseudonyms';
import { SessionStore } from '../gateway/session/store';
import { capture } from './fixtures/capture';
import { runCli } from './run';

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'homing-cli-sessions-'));
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

/** Two conversations written the way the gateway writes them. */
function seed(): { groupId: string; groupKey: string; dmId: string } {
  const db = openDatabase(join(dataDir, 'homing.db'), { migrations: homingMigrations });
  try {
    const store = new SessionStore({ db, dataDir, pseudonyms: createPseudonymiser(loadOrCreateInstallSecret(dataDir)) });
    const group = { platform: 'irc', chatId: '#homing', chatType: 'group' as const, senderId: 'alice`', senderName: 'alice', chatName: '#homing' };
    const dm = { platform: 'signal', chatId: '+15551234567', chatType: 'direct' as const, senderId: '+15551234567', senderName: 'Bob' };
    const g = store.resolve(group);
    store.appendUserTurn(g.sessionId, { source: group, text: 'hello \u001b[2J world' });
    store.appendAssistantTurn(g.sessionId, { obligationId: 'a'.repeat(24), text: 'hi alice' });
    store.appendSummary(g.sessionId, { text: 'alice said hello', keepFrom: undefined, covers: 2, cut: 1 });
    const d = store.resolve(dm);
    store.appendUserTurn(d.sessionId, { source: dm, text: 'ping' });
    return { groupId: g.sessionId, groupKey: g.sessionKey, dmId: d.sessionId };
  } finally {
    db.close();
  }
}

describe('homing sessions', () => {
  it('list --json prints the sessions of the data directory', async () => {
    const { groupId, dmId } = seed();
    const { context, out } = capture();
    expect(await runCli(['sessions', 'list', '--json', '--data-dir', dataDir], context)).toBe(0);
    const page = JSON.parse(out.join('\n')) as SessionPage;
    expect(page.total).toBe(2);
    expect(page.sessions.map((session) => session.sessionId).sort()).toEqual([groupId, dmId].sort());
    expect(page.sessions.find((session) => session.sessionId === groupId)).toMatchObject({ platform: 'irc', title: '#homing', messageCount: 2 });
    expect(out.join('\n')).not.toContain('5551234567');
  });

  it('list honours HOMING_DATA_DIR and prints one line per session', async () => {
    const { groupId } = seed();
    const { context, out } = capture({ HOMING_DATA_DIR: dataDir });
    expect(await runCli(['sessions', 'list'], context)).toBe(0);
    expect(out.find((line) => line.startsWith(groupId))).toMatch(/irc\/group {2}2 msgs .* #homing {2}“hi alice”/);
    expect(out.at(-1)).toBe('— page 1 of 1, 2 sessions');
  });

  it('list pages with --after, printing the next cursor until the last page', async () => {
    const db = openDatabase(join(dataDir, 'homing.db'), { migrations: homingMigrations });
    try {
      const store = new SessionStore({ db, dataDir, pseudonyms: createPseudonymiser(loadOrCreateInstallSecret(dataDir)) });
      db.transaction(() => {
        for (let n = 0; n < 60; n++) {
          const source = { platform: 'irc', chatId: `nick${n}`, chatType: 'direct' as const, senderId: `nick${n}`, senderName: `nick${n}` };
          store.appendUserTurn(store.resolve(source).sessionId, { source, text: `hi ${n}` });
        }
      })();
    } finally {
      db.close();
    }
    const first = capture();
    expect(await runCli(['sessions', 'list', '--data-dir', dataDir], first.context)).toBe(0);
    const footer = first.out.at(-1)!;
    expect(footer).toMatch(/^— page 1 of 2, 60 sessions; next page: --after [A-Za-z0-9_-]+$/);
    const second = capture();
    expect(await runCli(['sessions', 'list', '--data-dir', dataDir, '--after', footer.split('--after ')[1]!], second.context)).toBe(0);
    expect(second.out.at(-1)).toBe('— page 2 of 2, 60 sessions');
    const ids = [...first.out.slice(0, -1), ...second.out.slice(0, -1)].map((line) => line.split(' ')[0]);
    expect(new Set(ids).size).toBe(60);
  });

  it('list on a data directory without a database says so and creates nothing', async () => {
    const { context, out } = capture();
    expect(await runCli(['sessions', 'list', '--data-dir', dataDir], context)).toBe(0);
    expect(out).toEqual([`No sessions in ${dataDir}.`]);
    expect(existsSync(join(dataDir, 'homing.db'))).toBe(false);
  });

  it('show prints a transcript by id or by key, with terminal escapes neutralised', async () => {
    const { groupId, groupKey } = seed();
    for (const target of [groupId, groupKey]) {
      const { context, out } = capture();
      expect(await runCli(['sessions', 'show', target, '--data-dir', dataDir], context)).toBe(0);
      const text = out.join('\n');
      expect(text).toContain(`Session ${groupId}`);
      expect(text).toMatch(/alice \(user_[0-9a-f]{12}\): hello \ufffd\[2J world/);
      expect(text).toContain('assistant: hi alice');
      expect(text).toContain('summary of 2 earlier messages, 1 cut to fit first: alice said hello');
      expect(text).not.toContain('\u001b');
    }
  });

  it('show --json prints the session and its messages', async () => {
    const { dmId } = seed();
    const { context, out } = capture();
    expect(await runCli(['sessions', 'show', dmId, '--json', '--data-dir', dataDir], context)).toBe(0);
    const shown = JSON.parse(out.join('\n')) as { session: { sessionId: string }; messages: { role: string; text: string }[] };
    expect(shown.session.sessionId).toBe(dmId);
    expect(shown.messages).toEqual([expect.objectContaining({ role: 'user', text: 'ping' })]);
  });

  it('show of a missing session fails with a clear message (exit 1)', async () => {
    seed();
    const { context, err } = capture();
    expect(await runCli(['sessions', 'show', '20260101-000000-000-0000000000', '--data-dir', dataDir], context)).toBe(1);
    expect(err).toEqual([`homing: no session "20260101-000000-000-0000000000" in ${dataDir}`]);
  });

  it.each([
    [['sessions'], /^homing: sessions: missing argument/],
    [['sessions', 'frobnicate'], /^homing: sessions: unknown action "frobnicate"/],
    [['sessions', 'show'], /^homing: sessions show: which session\?/],
    [['sessions', 'list', '--page', 'two'], /^homing: sessions list: --page must be a positive number/],
    [['sessions', 'list', '--after', 'two'], /^homing: sessions list: --after takes the cursor a previous page printed/],
    [['sessions', 'show', 'x', '--after', 'WzEsImEiLDJd'], /^homing: sessions show: --after and --page apply to list only/],
    [['sessions', 'list', '--frobnicate'], /^homing: sessions: unknown flag '--frobnicate'/],
  ])('%j is a usage error (exit 2, one line)', async (argv, message) => {
    const { context, err } = capture({ HOMING_DATA_DIR: dataDir });
    expect(await runCli(argv, context)).toBe(2);
    expect(err).toHaveLength(1);
    expect(err[0]).toMatch(message);
  });
});
