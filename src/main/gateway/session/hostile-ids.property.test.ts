import fc from 'fast-check';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../db/database';
import { homingMigrations } from '../db/migrations';
import { sanitizeDisplayName } from './display-text';
import { loadHostileIds } from './fixtures/shared-data';
import { isPathUnsafe, isSessionKeyUnsafe, resolveInside, UnsafePathError } from './path-safety';
import { createPseudonymiser } from './pseudonyms';
import { createSessionIdSource, isSessionId } from './session-id';
import { createSessionKeyBuilder, DM_SCOPES } from './session-key';
import { parseSessionSource, type ChatType, type SessionSource } from './source';
import { SessionStore } from './store';

const hostile = loadHostileIds();
const pseudonyms = createPseudonymiser(Buffer.alloc(32, 9));
const builders = Object.fromEntries(
  DM_SCOPES.map((dmScope) => [dmScope, createSessionKeyBuilder({ pseudonyms, dmScope, groupSessionsPerUser: true })]),
) as Record<(typeof DM_SCOPES)[number], (source: SessionSource) => string>;
const SESSIONS_DIR = resolve(tmpdir(), 'homing-never-created', 'sessions');

/** Everything one id goes through; returns what it became so callers can check for collisions. */
function throughKeysIdsAndPaths(id: string): { chatKey: string; threadKey: string; peerKeys: string[] } | undefined {
  // The edge: an id the schema refuses (empty, too long) goes no further, without throwing.
  const group = parseSessionSource({ platform: 'matrix', chatId: id, chatType: 'group' as ChatType });
  const thread = parseSessionSource({ platform: 'matrix', chatId: '!room:example.org', chatType: 'group', threadId: id });
  const direct = parseSessionSource({ platform: 'signal', chatId: id, senderId: id, chatType: 'direct', senderName: id });
  expect(group.ok).toBe(thread.ok);
  expect(group.ok).toBe(direct.ok);

  // As a would-be file name: refused, or resolved directly inside the sessions directory.
  try {
    const path = resolveInside(SESSIONS_DIR, id, '.jsonl');
    expect(isPathUnsafe(id)).toBe(false);
    expect(dirname(path)).toBe(SESSIONS_DIR);
    expect(basename(path)).toBe(`${id}.jsonl`);
  } catch (error) {
    expect(error).toBeInstanceOf(UnsafePathError);
  }
  expect(isSessionId(id)).toBe(false);

  if (!group.ok || !thread.ok || !direct.ok) return undefined;
  const chatKey = builders['per-platform-peer'](group.source);
  const threadKey = builders['per-platform-peer'](thread.source);
  const peerKeys = DM_SCOPES.filter((scope) => scope !== 'main').map((scope) => builders[scope](direct.source));
  for (const built of [chatKey, threadKey, ...peerKeys]) expect(isSessionKeyUnsafe(built)).toBe(false);
  // The chat appears in the key only as its pseudonym, whatever the raw id was.
  expect(chatKey).toMatch(/^agent:main:matrix:group:chat_[0-9a-f]{12}$/);
  // A direct chat's peer appears only as a pseudonym, whatever the raw id was.
  for (const built of peerKeys) expect(built).toMatch(/^agent:main:(signal:)?direct:user_[0-9a-f]{12}$/);
  const name = sanitizeDisplayName(direct.source.senderName);
  // eslint-disable-next-line no-control-regex
  if (name !== undefined) expect(name).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u2028\u2029]/);
  return { chatKey, threadKey, peerKeys };
}

/** Remembers which id made which key: a second id making the same key is a collision. */
function collisionChecker() {
  const seen = new Map<string, string>();
  return (id: string, keys: string[]) => {
    for (const built of keys) {
      const owner = seen.get(built);
      if (owner !== undefined && owner !== id) throw new Error(`${JSON.stringify(owner)} and ${JSON.stringify(id)} share the key ${built}`);
      seen.set(built, id);
    }
  };
}

describe('hostile ids from hostile-ids.json', () => {
  it('go through keys, ids and paths without escaping, throwing or colliding', () => {
    const check = collisionChecker();
    let accepted = 0;
    for (const id of hostile) {
      const result = throughKeysIdsAndPaths(id);
      if (!result) continue;
      accepted++;
      check(id, [result.chatKey, result.threadKey, ...result.peerKeys]);
    }
    expect(accepted).toBe(hostile.length - 1); // only the empty string is refused at the edge
  });

  it('keep look-alikes apart: case, Unicode normalisation, percent-encoding', () => {
    const build = (chatId: string) => builders['per-platform-peer']({ platform: 'matrix', chatId, chatType: 'group' });
    expect(build('ABC')).not.toBe(build('abc'));
    expect(build('e\u0301')).not.toBe(build('\u00e9'));
    expect(build('%2e%2e%2f%2e%2e%2f')).not.toBe(build('../../'));
  });

  describe('through a real store on disk', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'homing-hostile-'));
    afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

    it('write only sessions/<generated id>.jsonl inside the data directory', () => {
      const db = openDatabase(join(dataDir, 'homing.db'), { migrations: homingMigrations });
      const store = new SessionStore({ db, dataDir, pseudonyms });
      const sessionIds = new Set<string>();
      for (const id of hostile.filter((value) => value.length > 0)) {
        for (const chatType of ['group', 'direct'] as const) {
          const source: SessionSource = { platform: 'irc', chatId: id, chatType, senderId: id, senderName: id, threadId: id };
          const session = store.resolve(source);
          store.appendUserTurn(session.sessionId, { source, text: id, messageRef: id });
          expect(store.loadContext(session.sessionId).turns.map((turn) => turn.text)).toEqual([id]);
          sessionIds.add(session.sessionId);
        }
      }
      db.close();
      expect(sessionIds.size).toBe(2 * (hostile.length - 1));
      expect(readdirSync(dataDir).sort()).toEqual(expect.arrayContaining(['homing.db', 'sessions']));
      expect(readdirSync(dataDir).filter((name) => !name.startsWith('homing.db'))).toEqual(['sessions']);
      expect(readdirSync(join(dataDir, 'sessions')).sort()).toEqual([...sessionIds].map((id) => `${id}.jsonl`).sort());
    });
  });
});

/** Strings built from the characters that cause trouble, and arbitrary UTF-16 (lone surrogates included). */
const awkwardId = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({
    unit: fc.constantFrom('.', '/', '\\', ':', '%', '2', 'e', 'E', 'a', 'A', ' ', '\u0000', '\n', '\u202e', '\ud800', '\udc00', '\uff0e', '\uff0f', 'C', 'thread', 'sender'),
    maxLength: 24,
  }),
  fc.constantFrom(...hostile),
);

describe('a property-based run of random ids', () => {
  it('never escapes, never throws unhandled, never collides (10 000 cases)', () => {
    const check = collisionChecker();
    fc.assert(
      fc.property(awkwardId, (id) => {
        const result = throughKeysIdsAndPaths(id);
        if (result) check(id, [result.chatKey, result.threadKey, ...result.peerKeys]);
      }),
      { numRuns: 10_000 },
    );
  });

  it('makes file-safe session ids that sort by creation time (10 000 cases)', () => {
    const instant = fc.integer({ min: 0, max: 253_402_300_799_999 }); // up to the end of year 9999
    const bytes = fc.uint8Array({ minLength: 5, maxLength: 5 });
    fc.assert(
      fc.property(instant, instant, bytes, bytes, (t1, t2, r1, r2) => {
        const id1 = createSessionIdSource({ now: () => t1 }, () => r1)();
        const id2 = createSessionIdSource({ now: () => t2 }, () => r2)();
        for (const id of [id1, id2]) {
          expect(isSessionId(id)).toBe(true);
          expect(dirname(resolveInside(SESSIONS_DIR, id, '.jsonl'))).toBe(SESSIONS_DIR);
        }
        if (t1 < t2) expect(id1 < id2).toBe(true);
        if (t1 !== t2 || Buffer.compare(r1, r2) !== 0) expect(id1).not.toBe(id2);
      }),
      { numRuns: 10_000 },
    );
  });
});
