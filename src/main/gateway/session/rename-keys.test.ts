import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { computeObligationId } from '../ledger/obligation-id';
import { ManualClock, openTestDb, removeTempDirs, tempDir, testLedger } from '../ledger/fixtures/test-ledger';
import { createLineLogger } from '../logger';
import { createPseudonymiser } from './pseudonyms';
import { renameRawSessionKeys } from './rename-keys';
import { encodeKeyPart } from './session-key';
import type { SessionSource } from './source';
import { SessionStore } from './store';

afterEach(removeTempDirs);

const pseudonyms = createPseudonymiser(Buffer.alloc(32, 5));
const topic: SessionSource = { platform: 'telegram', chatId: '-1001234567890', chatType: 'group', threadId: '42', senderId: '7100000001', senderName: 'Ada' };
/** The key an earlier Homing stored for `topic`: its raw ids, escaped. */
const OLD_KEY = `agent:main:telegram:group:${encodeKeyPart(topic.chatId)}:thread:${encodeKeyPart(topic.threadId!)}`;

describe('renaming the session keys an earlier Homing stored with raw ids', () => {
  it('renames them in the session index and the ledger once, so the conversation and its outbox go on under a key with no raw id', () => {
    const dir = tempDir();
    const db = openTestDb(join(dir, 'homing.db'));
    const clock = new ManualClock();
    const logged: string[] = [];
    const logger = createLineLogger({ write: (line) => logged.push(line) });
    // An earlier Homing's data: the conversation, its current key, an owed reply in its outbox.
    db.prepare(
      `INSERT INTO sessions (session_id, session_key, platform, chat_type, chat_pseudonym, address, created_at, updated_at)
       VALUES ('sess-1', ?, 'telegram', 'group', ?, ?, 1, 1)`,
    ).run(OLD_KEY, pseudonyms.chat('telegram', topic.chatId), JSON.stringify({ platform: 'telegram', chatId: topic.chatId, threadId: topic.threadId }));
    db.prepare(`INSERT INTO session_keys (session_key, session_id) VALUES (?, 'sess-1')`).run(OLD_KEY);
    const ledger = testLedger(db, clock);
    const id = computeObligationId(OLD_KEY, 'tg:-1001234567890:5', 'an owed reply');
    ledger.recordObligation({ obligationId: id, sessionKey: OLD_KEY, platform: 'telegram', chatId: topic.chatId, threadId: topic.threadId!, replyTo: null, content: 'an owed reply', chunks: [], messageRef: 'tg:-1001234567890:5' });

    expect(renameRawSessionKeys(db, pseudonyms, logger, clock.now())).toBe(1);
    const store = new SessionStore({ db, dataDir: dir, pseudonyms, clock, logger });
    const newKey = store.sessionKeyFor(topic);
    expect(newKey).not.toContain('1001234567890');
    // The conversation goes on (same session), and its owed reply is in the same conversation's outbox.
    expect(store.resolve(topic)).toMatchObject({ sessionKey: newKey, sessionId: 'sess-1', status: 'continued' });
    expect(ledger.getDelivery(id)).toMatchObject({ sessionKey: newKey, state: 'pending' });
    expect(db.prepare('SELECT count(*) FROM sessions WHERE session_key LIKE ?').pluck().get('%1001234567890%')).toBe(0);
    expect(logged.join('\n')).toMatch(/session keys renamed.*"keys":1/);
    // Once: a key stored raw after it (it cannot be, but say it was) is left alone.
    db.prepare(`UPDATE sessions SET session_key = ? WHERE session_id = 'sess-1'`).run(OLD_KEY);
    expect(renameRawSessionKeys(db, pseudonyms, logger, clock.now())).toBe(0);
    expect(db.prepare(`SELECT session_key FROM sessions WHERE session_id = 'sess-1'`).pluck().get()).toBe(OLD_KEY);
    db.close();
  });

  it('leaves every key as it was, and says so, when it cannot rename them', () => {
    const dir = tempDir();
    const db = openTestDb(join(dir, 'homing.db'));
    db.prepare(
      `INSERT INTO sessions (session_id, session_key, platform, chat_type, chat_pseudonym, address, created_at, updated_at)
       VALUES ('sess-1', ?, 'telegram', 'group', 'telegram:x', '{}', 1, 1)`,
    ).run(OLD_KEY);
    db.prepare(`INSERT INTO session_keys (session_key, session_id) VALUES (?, 'sess-1')`).run(OLD_KEY);
    // The new key is taken already (a conversation begun under it): the renaming fails as a whole.
    const store = new SessionStore({ db, dataDir: dir, pseudonyms, clock: new ManualClock() });
    db.prepare(`INSERT INTO session_keys (session_key, session_id) VALUES (?, 'sess-1')`).run(store.sessionKeyFor(topic));
    const logged: string[] = [];
    expect(renameRawSessionKeys(db, pseudonyms, createLineLogger({ write: (line) => logged.push(line) }), 1)).toBe(0);
    expect(db.prepare(`SELECT session_key FROM sessions WHERE session_id = 'sess-1'`).pluck().get()).toBe(OLD_KEY);
    expect(logged.join('\n')).toMatch(/ERROR the session keys could not be renamed/);
    db.close();
  });
});
