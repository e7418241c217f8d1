import { appendFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { GatewayEvent } from '../../../shared/api';
import { CommitGroup } from '../db/commit-group';
import { openDatabase, type Db } from '../db/database';
import { homingMigrations } from '../db/migrations';
import { defaultContinuationPolicy, lastDailyBoundary, parseSessionCommand, type ContinuationPolicy } from './continuation';
import { createPseudonymiser } from './pseudonyms';
import { createSessionIdSource } from './session-id';
import { SessionNotFoundError, SessionReader } from './session-reader';
import type { SessionSource } from './source';
import { REMARK_MS, SessionStore } from './store';

const MINUTE = 60_000;
const pseudonyms = createPseudonymiser(Buffer.alloc(32, 3));

let dataDir: string;
let db: Db;
let clock: { t: number; now(): number; monotonic(): number };
let events: Extract<GatewayEvent, { type: 'session.updated' }>[];

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'homing-store-'));
  db = openDatabase(join(dataDir, 'homing.db'), { migrations: homingMigrations });
  clock = { t: Date.UTC(2026, 0, 30, 12, 0, 0), now: () => clock.t, monotonic: () => clock.t };
  events = [];
});
afterEach(() => {
  db.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function store(policy: Partial<ContinuationPolicy> = {}, commits?: CommitGroup): SessionStore {
  let counter = 0;
  return new SessionStore({
    db,
    ...(commits ? { group: commits } : {}),
    dataDir,
    pseudonyms,
    clock,
    policy: { ...defaultContinuationPolicy, ...policy },
    newSessionId: createSessionIdSource(clock, (size) => Buffer.alloc(size, ++counter)),
    onEvent: (event) => events.push(event),
  });
}

const group: SessionSource = {
  platform: 'telegram',
  chatId: '-1001234567890',
  chatType: 'group',
  senderId: '123456789',
  senderName: 'Alice\u202e\nAdmin',
  chatName: 'Homing testers',
};
const signalDm: SessionSource = { platform: 'signal', chatId: '+15551234567', chatType: 'direct', senderId: '+15551234567', senderName: 'Bob' };

describe('SessionStore: resolving a conversation', () => {
  it('starts a session for a new key and continues it for the next message', () => {
    const sessions = store();
    const first = sessions.resolve(group);
    expect(first).toEqual({ sessionKey: expect.stringMatching(/^agent:main:telegram:group:chat_[0-9a-f]{12}$/), sessionId: expect.any(String), status: 'new' });
    clock.t += MINUTE;
    expect(sessions.resolve(group)).toEqual({ ...first, status: 'continued' });
  });

  it('writes transcripts as sessions/<session id>.jsonl', () => {
    const sessions = store();
    const { sessionId } = sessions.resolve(group);
    sessions.appendUserTurn(sessionId, { source: group, text: 'hi' });
    expect(readdirSync(join(dataDir, 'sessions'))).toEqual([`${sessionId}.jsonl`]);
  });

  it('names people by pseudonym and a cleaned display name, never by raw id', () => {
    const sessions = store();
    const { sessionId } = sessions.resolve(signalDm);
    const turn = sessions.appendUserTurn(sessionId, { source: { ...signalDm, senderName: 'Bob\u001b[31m' }, text: 'hello', messageRef: '1712345678' });
    expect(turn.sender).toEqual({ id: pseudonyms.person('signal', '+15551234567'), name: 'Bob [31m' });
    sessions.appendAssistantTurn(sessionId, { obligationId: 'a'.repeat(24), text: 'hi Bob' });
    const transcript = readFileSync(sessions.transcriptPath(sessionId), 'utf8');
    const listing = JSON.stringify(sessions.list());
    for (const shown of [transcript, listing, JSON.stringify(events)]) {
      expect(shown).not.toContain('5551234567');
    }
    // …while the index keeps the raw address, which replying needs.
    expect(sessions.deliveryAddress(sessionId)).toEqual({ platform: 'signal', chatId: '+15551234567', chatType: 'direct' });
  });

  it('announces created, message and ended changes', () => {
    const sessions = store();
    const { sessionId } = sessions.resolve(group);
    sessions.appendUserTurn(sessionId, { source: group, text: 'hi' });
    const renewed = sessions.startNewSession(group);
    expect(events.map((event) => [event.change, event.session.sessionId])).toEqual([
      ['created', sessionId],
      ['message', sessionId],
      ['ended', sessionId],
      ['created', renewed.sessionId],
    ]);
    expect(events[1]!.session.lastMessagePreview).toBe('hi');
  });

  it('writes nothing for a message from where the last one came, and the new title when the chat was renamed', () => {
    const sessions = store();
    const { sessionId } = sessions.resolve(group);
    // Another connection holds the write lock: a write from resolve would wait, then fail.
    db.pragma('busy_timeout = 50');
    const other = openDatabase(join(dataDir, 'homing.db'), { migrations: homingMigrations });
    other.exec('BEGIN IMMEDIATE');
    try {
      clock.t += MINUTE;
      expect(sessions.resolve(group)).toMatchObject({ sessionId, status: 'continued' });
      expect(() => sessions.resolve({ ...group, chatName: 'Homing testers (renamed)' })).toThrow(/locked|busy/i);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect(sessions.resolve({ ...group, chatName: 'Homing testers (renamed)' })).toMatchObject({ sessionId, status: 'continued' });
    expect(sessions.get(sessionId)?.title).toBe('Homing testers (renamed)');
  });

  it('refuses to append to a session that does not exist', () => {
    expect(() => store().appendUserTurn('20260130-120000-000-0000000000', { source: group, text: 'x' })).toThrow(SessionNotFoundError);
  });
});

describe('SessionStore: context and interrupted turns', () => {
  it('loads the last turns for the agent in order, and respects a character budget', () => {
    const sessions = store();
    const { sessionId } = sessions.resolve(group);
    for (let i = 0; i < 6; i++) {
      if (i % 2 === 0) sessions.appendUserTurn(sessionId, { source: group, text: `q${i}`, messageRef: `m${i}` });
      else sessions.appendAssistantTurn(sessionId, { obligationId: `o${i}`, text: `a${i}`, replyTo: `m${i - 1}` });
    }
    expect(sessions.loadContext(sessionId, { maxTurns: 3 }).turns.map((turn) => turn.text)).toEqual(['a3', 'q4', 'a5']);
    expect(sessions.loadContext(sessionId, { maxChars: 4 }).turns.map((turn) => turn.text)).toEqual(['q4', 'a5']);
    expect(sessions.get(sessionId)).toMatchObject({ messageCount: 6, userMessageCount: 3, assistantMessageCount: 3, lastMessagePreview: 'a5' });
  });

  it('finds user messages left without a reply, and decides by the freshness window', () => {
    const sessions = store();
    const { sessionId } = sessions.resolve(group);
    sessions.appendUserTurn(sessionId, { source: group, text: 'first', messageRef: 'm1' });
    sessions.appendAssistantTurn(sessionId, { obligationId: 'o1', text: 'reply', replyTo: 'm1' });
    expect(sessions.findInterruptedTurn(sessionId)).toBeUndefined();

    sessions.appendUserTurn(sessionId, { source: group, text: 'second', messageRef: 'm2' });
    sessions.appendUserTurn(sessionId, { source: group, text: 'third', messageRef: 'm3' });
    clock.t += 59 * MINUTE;
    const fresh = sessions.findInterruptedTurn(sessionId);
    expect(fresh?.turns.map((turn) => turn.messageRef)).toEqual(['m2', 'm3']);
    expect(fresh?.decision).toBe('auto-continue');
    expect(fresh?.ageMs).toBe(59 * MINUTE);

    clock.t += 2 * MINUTE;
    expect(sessions.findInterruptedTurn(sessionId)?.decision).toBe('ask-user');
    expect(store({ freshnessWindowSeconds: 0 }).findInterruptedTurn(sessionId)?.decision).toBe('ask-user');
  });

  it('finds the assistant turn that carries an obligation', () => {
    const sessions = store();
    const { sessionId } = sessions.resolve(group);
    sessions.appendAssistantTurn(sessionId, { obligationId: 'b'.repeat(24), text: 'reply' });
    expect(sessions.findAssistantTurn(sessionId, 'b'.repeat(24))?.text).toBe('reply');
    expect(sessions.findAssistantTurn(sessionId, 'c'.repeat(24))).toBeUndefined();
  });
});

describe('SessionStore: a torn last line', () => {
  it('is skipped by a reader without touching the file, and cut by the store before it appends', () => {
    const sessions = store();
    const { sessionId } = sessions.resolve(group);
    sessions.appendUserTurn(sessionId, { source: group, text: 'kept' });
    const path = sessions.transcriptPath(sessionId);
    appendFileSync(path, '{"type":"assistant","at":1,"obligationId":"x","te');
    const tornSize = statSync(path).size;

    expect(new SessionReader(db, dataDir).readContext(sessionId).turns.map((turn) => turn.text)).toEqual(['kept']);
    expect(statSync(path).size).toBe(tornSize);

    const restarted = store();
    expect(restarted.loadContext(sessionId).turns.map((turn) => turn.text)).toEqual(['kept']);
    expect(readFileSync(path, 'utf8').endsWith('\n')).toBe(true);
    restarted.appendAssistantTurn(sessionId, { obligationId: 'y', text: 'after repair' });
    expect(restarted.loadContext(sessionId).turns.map((turn) => turn.text)).toEqual(['kept', 'after repair']);
  });
});

describe('SessionStore: continuation rules', () => {
  it('by default (reset none) continues a conversation however long it was quiet', () => {
    const sessions = store();
    const { sessionId } = sessions.resolve(group);
    sessions.appendUserTurn(sessionId, { source: group, text: 'hi' });
    clock.t += 400 * 24 * 60 * MINUTE;
    expect(sessions.resolve(group)).toMatchObject({ sessionId, status: 'continued' });
  });

  it('idle: starts a new session after the idle minutes, and the old transcript stays readable', () => {
    const sessions = store({ reset: { mode: 'idle', idleMinutes: 30 } });
    const { sessionId } = sessions.resolve(group);
    sessions.appendUserTurn(sessionId, { source: group, text: 'before the break' });
    clock.t += 29 * MINUTE;
    expect(sessions.resolve(group)).toMatchObject({ sessionId, status: 'continued' });
    clock.t += 30 * MINUTE; // 30 minutes after the last message; resolving alone is no activity
    const renewed = sessions.resolve(group);
    expect(renewed).toMatchObject({ status: 'reset', resetReason: 'idle', previousSessionId: sessionId });
    expect(renewed.sessionId).not.toBe(sessionId);
    expect(renewed.sessionId > sessionId).toBe(true);
    expect(sessions.transcript(sessionId).messages.map((message) => message.text)).toEqual(['before the break']);
    expect(sessions.get(sessionId)).toMatchObject({ current: false, endReason: 'idle' });
  });

  it('daily: starts a new session once the local reset hour has passed since the last message', () => {
    const sessions = store({ reset: { mode: 'daily', atHour: 4 } });
    clock.t = lastDailyBoundary(Date.UTC(2026, 5, 15, 12), 4) + 24 * 60 * MINUTE - MINUTE; // 03:59 local, next day
    const { sessionId } = sessions.resolve(group);
    sessions.appendUserTurn(sessionId, { source: group, text: 'late night' });
    clock.t += MINUTE - 1;
    expect(sessions.resolve(group)).toMatchObject({ sessionId, status: 'continued' });
    clock.t += 2 * MINUTE; // 04:01
    expect(sessions.resolve(group)).toMatchObject({ status: 'reset', resetReason: 'daily', previousSessionId: sessionId });
  });

  it('applies a per-chat-type override', () => {
    const sessions = store({ reset: { mode: 'none' }, resetByChatType: { group: { mode: 'idle', idleMinutes: 10 } } });
    const inGroup = sessions.resolve(group);
    const inDm = sessions.resolve(signalDm);
    clock.t += 11 * MINUTE;
    expect(sessions.resolve(group)).toMatchObject({ status: 'reset', previousSessionId: inGroup.sessionId });
    expect(sessions.resolve(signalDm)).toMatchObject({ status: 'continued', sessionId: inDm.sessionId });
  });

  it('/new and /reset start a new session id for the key; earlier ones stay listed and readable', () => {
    expect(parseSessionCommand('/new')).toEqual({ command: 'new', rest: '' });
    expect(parseSessionCommand('  /reset@HomingBot  start over ')).toEqual({ command: 'reset', rest: 'start over' });
    expect(parseSessionCommand('/newer')).toBeUndefined();
    expect(parseSessionCommand('please /new')).toBeUndefined();

    const sessions = store();
    const first = sessions.resolve(group);
    sessions.appendUserTurn(first.sessionId, { source: group, text: 'old topic' });
    clock.t += MINUTE;
    const second = sessions.startNewSession(group);
    expect(second).toMatchObject({ sessionKey: first.sessionKey, status: 'reset', resetReason: 'command', previousSessionId: first.sessionId });
    expect(sessions.resolve(group)).toMatchObject({ sessionId: second.sessionId, status: 'continued' });
    expect(sessions.history(first.sessionKey).map((session) => [session.sessionId, session.current])).toEqual([
      [second.sessionId, true],
      [first.sessionId, false],
    ]);
    expect(sessions.find(first.sessionKey)?.sessionId).toBe(second.sessionId);
    expect(sessions.transcript(first.sessionId).messages).toHaveLength(1);
  });
});

describe('SessionStore: listing and pages', () => {
  it('lists the most recently active first, with platform, title, preview and counts, in pages', () => {
    const sessions = store();
    const chats = ['-1', '-2', '-3'].map((chatId) => ({ ...group, chatId, chatName: `chat ${chatId}` }));
    const ids = chats.map((source) => {
      clock.t += MINUTE;
      const { sessionId } = sessions.resolve(source);
      sessions.appendUserTurn(sessionId, { source, text: `hello in ${source.chatId}\nsecond line` });
      return sessionId;
    });
    clock.t += MINUTE;
    sessions.appendAssistantTurn(ids[0]!, { obligationId: 'o', text: 'answer' });

    const page1 = sessions.list({ page: 1, pageSize: 2 });
    expect(page1.total).toBe(3);
    expect(page1.sessions.map((session) => session.sessionId)).toEqual([ids[0], ids[2]]);
    expect(page1.sessions[1]).toMatchObject({
      platform: 'telegram',
      chatType: 'group',
      title: 'chat -3',
      lastMessagePreview: 'hello in -3 second line',
      messageCount: 1,
      current: true,
    });
    expect(sessions.list({ page: 2, pageSize: 2 }).sessions.map((session) => session.sessionId)).toEqual([ids[1]]);
  });

  it('pages a transcript oldest first', () => {
    const sessions = store();
    const { sessionId } = sessions.resolve(group);
    for (let i = 0; i < 5; i++) sessions.appendUserTurn(sessionId, { source: group, text: `m${i}` });
    const page = sessions.transcript(sessionId, { page: 2, pageSize: 2 });
    expect(page).toMatchObject({ page: 2, pageSize: 2, pageCount: 3, totalMessages: 5 });
    expect(page.messages.map((message) => message.text)).toEqual(['m2', 'm3']);
    expect(page.messages[0]).toMatchObject({ role: 'user', sender: { pseudonym: pseudonyms.person('telegram', '123456789'), name: 'Alice Admin' } });
  });
});

describe('SessionStore: which conversations may hold a waiting message (recovery)', () => {
  it('counts a user line as waiting before it is written and its reply as answering it; recovery reads only those', async () => {
    const sessions = store();
    const answered = sessions.resolve(group);
    sessions.appendUserTurn(answered.sessionId, { source: group, text: 'hi', messageRef: 'm1' });
    sessions.appendAssistantTurn(answered.sessionId, { obligationId: 'o1', text: 'hello', replyTo: 'm1' });
    const waiting = sessions.resolve(signalDm);
    sessions.appendUserTurn(waiting.sessionId, { source: signalDm, text: 'are you there?', messageRef: 'm2' });
    await sessions.whenDurable(waiting.sessionId);

    const since = clock.now() - MINUTE;
    expect(sessions.waitingSince(since, { powerLoss: false }).map((s) => s.sessionId)).toEqual([waiting.sessionId]);
    // Recovery read the transcript: nothing waits any more.
    sessions.noteUnanswered(waiting.sessionId, 0);
    expect(sessions.waitingSince(since, { powerLoss: false })).toEqual([]);
    sessions.close();
  });

  it('an aside before the answer (a reset note: no replyTo) leaves the message waiting; the answer takes it off', () => {
    const sessions = store();
    const { sessionId } = sessions.resolve(group);
    sessions.appendUserTurn(sessionId, { source: group, text: 'morning', messageRef: 'm1' });
    sessions.appendAssistantTurn(sessionId, { obligationId: 'o-aside', text: 'A new day, a new conversation.', notice: true });
    const since = clock.now() - MINUTE;
    expect(sessions.waitingSince(since, { powerLoss: false }).map((s) => s.sessionId)).toEqual([sessionId]);
    sessions.appendAssistantTurn(sessionId, { obligationId: 'o1', text: 'Good morning', replyTo: 'm1' });
    expect(sessions.waitingSince(since, { powerLoss: false })).toEqual([]);
    sessions.close();
  });

  it('after a possible power cut reads every current session whose transcript changed, whatever the index says', () => {
    const sessions = store();
    const a = sessions.resolve(group);
    sessions.appendUserTurn(a.sessionId, { source: group, text: 'hi', messageRef: 'm1' });
    // The count's commit was lost with the machine (synchronous = NORMAL): the index says nothing waits.
    sessions.noteUnanswered(a.sessionId, 0);
    const since = Date.now() - MINUTE; // transcripts' mtimes are real time
    expect(sessions.waitingSince(since, { powerLoss: false })).toEqual([]);
    expect(sessions.waitingSince(since, { powerLoss: true }).map((s) => s.sessionId)).toEqual([a.sessionId]);
    expect(sessions.waitingSince(Date.now() + MINUTE, { powerLoss: true })).toEqual([]);
    sessions.close();
  });

  it('a busy conversation commits its waiting mark once, not once a message, and clears it with its last answer', () => {
    const commits = new CommitGroup(db);
    const sessions = store({}, commits);
    const { sessionId } = sessions.resolve(group);
    const since = clock.now() - MINUTE;
    const changes = () => (db.prepare('SELECT total_changes() AS n').get() as { n: number }).n;
    const waiting = () => sessions.waitingSince(since, { powerLoss: false }).map((s) => s.sessionId);

    let before = changes();
    sessions.appendUserTurn(sessionId, { source: group, text: 'one', messageRef: 'm1' });
    expect(changes() - before).toBe(1); // the mark, committed before the line
    before = changes();
    sessions.appendUserTurn(sessionId, { source: group, text: 'two', messageRef: 'm2' });
    expect(changes() - before).toBe(0); // the committed mark already says a message waits
    commits.flush();
    expect(waiting()).toEqual([sessionId]);

    sessions.appendAssistantTurn(sessionId, { obligationId: 'o1', text: 'first answer', replyTo: 'm1' });
    commits.flush();
    expect(waiting()).toEqual([sessionId]); // m2 still waits
    sessions.appendAssistantTurn(sessionId, { obligationId: 'o2', text: 'second answer', replyTo: 'm2' });
    commits.flush();
    expect(waiting()).toEqual([]);

    // Cleared: the next message commits its mark again.
    before = changes();
    sessions.appendUserTurn(sessionId, { source: group, text: 'three', messageRef: 'm3' });
    expect(changes() - before).toBe(1);
    expect(waiting()).toEqual([sessionId]);
    commits.close();
    sessions.close();
  });

  it('a message saved while the clearing answer waits for its commit keeps the conversation waiting', () => {
    const commits = new CommitGroup(db);
    const sessions = store({}, commits);
    const { sessionId } = sessions.resolve(group);
    const since = clock.now() - MINUTE;
    sessions.appendUserTurn(sessionId, { source: group, text: 'one', messageRef: 'm1' });
    sessions.appendAssistantTurn(sessionId, { obligationId: 'o1', text: 'answer', replyTo: 'm1' });
    // Queued, not committed: the answer would clear the count, but m2 came first.
    sessions.appendUserTurn(sessionId, { source: group, text: 'two', messageRef: 'm2' });
    commits.flush();
    expect(sessions.waitingSince(since, { powerLoss: false }).map((s) => s.sessionId)).toEqual([sessionId]);
    commits.close();
    sessions.close();
  });

  it('marks a long-waiting conversation again after REMARK_MS, so recovery still looks at it', () => {
    const commits = new CommitGroup(db);
    const sessions = store({}, commits);
    const { sessionId } = sessions.resolve(group);
    sessions.appendUserTurn(sessionId, { source: group, text: 'one', messageRef: 'm1' });
    commits.flush();
    clock.t += REMARK_MS + 1;
    const before = db.prepare('SELECT updated_at FROM sessions WHERE session_id = ?').pluck().get(sessionId);
    sessions.appendUserTurn(sessionId, { source: group, text: 'much later', messageRef: 'm2' });
    // Committed with the line, not after it: a kill now still finds the conversation recent.
    const after = db.prepare('SELECT updated_at FROM sessions WHERE session_id = ?').pluck().get(sessionId);
    expect(after).toBe(clock.t);
    expect(after).not.toBe(before);
    commits.close();
    sessions.close();
  });

  it('writes a user line at once and says when it is on disk (off the event loop); an assistant line after it is read back too', async () => {
    const sessions = store();
    const { sessionId } = sessions.resolve(signalDm);
    sessions.appendUserTurn(sessionId, { source: signalDm, text: 'one', messageRef: 'm1' });
    sessions.appendUserTurn(sessionId, { source: signalDm, text: 'two', messageRef: 'm2' });
    // Written when append returns (a kill cannot lose it), on disk once whenDurable settles.
    expect(readFileSync(sessions.transcriptPath(sessionId), 'utf8')).toContain('"two"');
    await expect(sessions.whenDurable(sessionId)).resolves.toBeUndefined();
    sessions.appendAssistantTurn(sessionId, { obligationId: 'o1', text: 'answer', replyTo: 'm1' });
    await expect(sessions.whenDurable(sessionId)).resolves.toBeUndefined();
    expect(sessions.loadContext(sessionId).turns.map((turn) => turn.text)).toEqual(['one', 'two', 'answer']);
    sessions.close();
  });
});
