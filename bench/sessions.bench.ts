import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../src/main/gateway/db/database';
import { homingMigrations } from '../src/main/gateway/db/migrations';
import { createPseudonymiser } from '../src/main/gateway/session/pseudonyms';
import { SessionStore } from '../src/main/gateway/session/store';
import { formatRecord, type TranscriptRecord } from '../src/main/gateway/session/transcript-record';
import type { SessionSource } from '../src/main/gateway/session/source';
import { medianMs, type Bench } from './harness';

const SOURCE: SessionSource = { platform: 'telegram', chatId: '-1001234567890', chatType: 'group', senderId: '123456789', senderName: 'Alice' };
const TURNS = 50;

/**
 * Context loading reads a transcript from its end, so loading the last 50 turns
 * should cost about the same for 100 messages as for 100 000. The transcripts
 * are written in bulk (one fsync per turn would make setup take minutes); the
 * lines are the store's own format.
 */
const bench: Bench = {
  name: 'sessions — context loading (last 50 turns)',
  async run(context) {
    const dataDir = context.tmpDir();
    const db = openDatabase(join(dataDir, 'homing.db'), { migrations: homingMigrations });
    try {
      const store = new SessionStore({ db, dataDir, pseudonyms: createPseudonymiser(Buffer.alloc(32, 1)) });
      const results: Record<number, number> = {};
      for (const messages of [100, 100_000]) {
        const { sessionId } = store.startNewSession({ ...SOURCE, chatId: `-100${messages}` });
        writeFileSync(store.transcriptPath(sessionId), transcript(messages));
        const check = store.loadContext(sessionId, { maxTurns: TURNS });
        if (check.turns.length !== TURNS) throw new Error(`expected ${TURNS} turns, got ${check.turns.length}`);
        results[messages] = medianMs(51, () => store.loadContext(sessionId, { maxTurns: TURNS }));
        context.report(`${messages} messages`, { ms: results[messages]!, bytesRead: check.bytesRead });
      }
      context.report('ratio 100 000 / 100', { ratio: results[100_000]! / results[100]! });
    } finally {
      db.close();
    }
  },
};

function transcript(messages: number): string {
  const lines: string[] = [];
  for (let i = 0; i < messages; i++) {
    const text = `message ${i}: ${'lorem ipsum dolor sit amet '.repeat(1 + (i % 7))}`;
    const record: TranscriptRecord =
      i % 2 === 0
        ? { type: 'user', at: i, messageRef: String(i), sender: { id: 'user_0123456789ab', name: 'Alice' }, text }
        : { type: 'assistant', at: i, obligationId: i.toString(16).padStart(24, '0'), replyTo: String(i - 1), text };
    lines.push(formatRecord(record));
  }
  return lines.join('');
}

export default bench;
