import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../db/database';
import { homingMigrations } from '../db/migrations';
import { unanswered } from '../pipeline/recovery';
import { createPseudonymiser } from './pseudonyms';
import type { SessionSource } from './source';
import { SessionStore } from './store';

/** Summary turns and Homing's asides in a transcript: what the agent, recovery and the window read. */

const source: SessionSource = { platform: 'irc', chatId: '#homing', chatType: 'channel', senderId: 'alice', senderName: 'alice', chatName: '#homing' };

let dataDir: string;
let db: Db;
let sessions: SessionStore;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'homing-summary-'));
  db = openDatabase(join(dataDir, 'homing.db'), { migrations: homingMigrations });
  let t = Date.UTC(2026, 0, 30, 12);
  sessions = new SessionStore({ db, dataDir, pseudonyms: createPseudonymiser(Buffer.alloc(32, 7)), clock: { now: () => ++t, monotonic: () => t } });
});
afterEach(() => {
  sessions.close();
  db.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function conversation(pairs: number): string {
  const { sessionId } = sessions.resolve(source);
  for (let i = 1; i <= pairs; i++) {
    sessions.appendUserTurn(sessionId, { source, text: `question ${i}`, messageRef: `m${i}` });
    sessions.appendAssistantTurn(sessionId, { obligationId: `o${i}`, text: `answer ${i}`, replyTo: `m${i}` });
  }
  return sessionId;
}

describe('summary turns', () => {
  it('stand for the turns before them, except those kept from keepFrom on', () => {
    const sessionId = conversation(4);
    sessions.appendUserTurn(sessionId, { source, text: 'question 5', messageRef: 'm5' });
    sessions.appendSummary(sessionId, { text: 'Questions 1 to 2 were about tea.', keepFrom: 'u:m3', covers: 4 });
    sessions.appendAssistantTurn(sessionId, { obligationId: 'o5', text: 'answer 5', replyTo: 'm5' });
    const { turns, summary, truncated } = sessions.loadAgentContext(sessionId, 50);
    expect(summary).toMatchObject({ text: 'Questions 1 to 2 were about tea.', covers: 4 });
    expect(turns.map((turn) => turn.text)).toEqual(['question 3', 'answer 3', 'question 4', 'answer 4', 'question 5', 'answer 5']);
    expect(truncated).toBe(false);
  });

  it('with nothing kept, only what came after the summary is read; the latest summary wins', () => {
    const sessionId = conversation(2);
    sessions.appendSummary(sessionId, { text: 'first', keepFrom: undefined, covers: 4 });
    sessions.appendUserTurn(sessionId, { source, text: 'question 3', messageRef: 'm3' });
    sessions.appendSummary(sessionId, { text: 'second', keepFrom: 'u:m3', covers: 4 });
    const { turns, summary } = sessions.loadAgentContext(sessionId, 50);
    expect(summary?.text).toBe('second');
    expect(turns.map((turn) => turn.text)).toEqual(['question 3']);
  });

  it('read on past an older summary line to the latest one\'s keepFrom (summaries are appended after turns they keep)', () => {
    // Two summaries written in one turn: the first kept from m2, the second from a2; both lines come after question 3.
    const sessionId = conversation(2);
    sessions.appendUserTurn(sessionId, { source, text: 'question 3', messageRef: 'm3' });
    sessions.appendSummary(sessionId, { text: 'first', keepFrom: 'u:m2', covers: 2 });
    sessions.appendSummary(sessionId, { text: 'second', keepFrom: 'a:o2', covers: 3 });
    sessions.appendAssistantTurn(sessionId, { obligationId: 'o3', text: 'answer 3', replyTo: 'm3' });
    const { turns, summary } = sessions.loadAgentContext(sessionId, 50);
    expect(summary?.text).toBe('second');
    expect(turns.map((turn) => turn.text)).toEqual(['answer 2', 'question 3', 'answer 3']);
  });

  it('are not messages: recovery still finds a message waiting behind a summary or an aside, and the window shows the summary', () => {
    const sessionId = conversation(1);
    sessions.appendUserTurn(sessionId, { source, text: 'question 2', messageRef: 'm2' });
    sessions.appendAssistantTurn(sessionId, { obligationId: 'aside', text: '↻ New day, new conversation', notice: true });
    sessions.appendSummary(sessionId, { text: 'tea', keepFrom: 'u:m2', covers: 2 });
    expect(sessions.findInterruptedTurn(sessionId)?.turns.map((turn) => turn.text)).toEqual(['question 2']);
    expect(unanswered(sessions.loadContext(sessionId).turns).map((turn) => turn.text)).toEqual(['question 2']);
    expect(sessions.findAssistantTurn(sessionId, 'o1')?.text).toBe('answer 1');
    // A notice that answers its message (a /status reply) is an answer.
    sessions.appendAssistantTurn(sessionId, { obligationId: 'o2', text: 'status…', replyTo: 'm2', notice: true });
    expect(sessions.findInterruptedTurn(sessionId)).toBeUndefined();
    const page = sessions.transcript(sessionId);
    expect(page.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'summary', 'assistant']);
    expect(page.messages[4]).toMatchObject({ role: 'summary', covers: 2, text: 'tea' });
    expect(sessions.get(sessionId)?.messageCount).toBe(5);
  });
});
