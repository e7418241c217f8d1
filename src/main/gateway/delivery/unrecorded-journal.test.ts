import { appendFileSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, openTestDb, removeTempDirs, tempDir, testLedger } from '../ledger/fixtures/test-ledger';
import { createLineLogger } from '../logger';
import { FOUR_PART_REPLY, FOUR_PART_REPLY_ID } from './fixtures/replies';
import { UNRECORDED_FILE, UnrecordedJournal } from './unrecorded-journal';

afterEach(removeTempDirs);

const INPUT = {
  obligationId: FOUR_PART_REPLY_ID,
  sessionKey: FOUR_PART_REPLY.sessionKey,
  platform: 'irc',
  chatId: FOUR_PART_REPLY.chatId,
  threadId: FOUR_PART_REPLY.threadId,
  replyTo: FOUR_PART_REPLY.replyTo,
  content: FOUR_PART_REPLY.content,
  chunks: FOUR_PART_REPLY.chunks,
  messageRef: FOUR_PART_REPLY.messageRef,
};

function setUp() {
  const dir = tempDir();
  const logged: string[] = [];
  const journal = new UnrecordedJournal(join(dir, UNRECORDED_FILE), createLineLogger({ write: (line) => logged.push(line) }));
  const ledger = testLedger(openTestDb(join(dir, 'homing.db')), new ManualClock());
  return { journal, ledger, logged };
}

describe('the journal of replies sent unrecorded', () => {
  it('gives the ledger the row it should have had, with the parts that may have arrived marked, and is removed after', () => {
    const { journal, ledger } = setUp();
    expect(journal.append([{ kind: 'reply', input: INPUT }], true)).toBe(true);
    expect(statSync(journal.file).mode & 0o777).toBe(0o600);
    journal.append([{ kind: 'chunk-sending', id: INPUT.obligationId, index: 0 }], true);
    journal.append([{ kind: 'chunk-delivered', id: INPUT.obligationId, index: 0, platformMessageId: 'm1' }], false);
    journal.append([{ kind: 'chunk-sending', id: INPUT.obligationId, index: 1 }], true);
    expect(journal.writeInto(ledger)).toBe(1);
    expect(existsSync(journal.file)).toBe(false);
    expect(ledger.getDelivery(INPUT.obligationId)).toMatchObject({ state: 'pending', chunksDelivered: 1 });
    // A confirmed part is never sent again: whether it may have arrived no longer matters.
    expect(ledger.chunks(INPUT.obligationId).map((chunk) => [chunk.state, chunk.mayHaveArrived])).toEqual([
      ['delivered', false],
      ['sending', true],
      ['owed', false],
      ['owed', false],
    ]);
  });

  it('skips a line torn by a crash or written by someone else, and says so; writing it twice changes nothing', () => {
    const { journal, ledger, logged } = setUp();
    journal.append([{ kind: 'reply', input: INPUT }], true);
    appendFileSync(journal.file, '{"kind":"chunk-sending","id":"x","index":"../../etc"}\n{"kind":"reply","input":{"obligationId":1}}\n[]\n{"kind":"deliv');
    expect(journal.read()).toEqual([{ kind: 'reply', input: INPUT }]);
    expect(logged.filter((line) => line.includes('cannot be read'))).toHaveLength(4);
    journal.append([{ kind: 'delivered', id: INPUT.obligationId }], false);
    // A start that died after writing it into the ledger and before removing the file does it again.
    const again = [...journal.read()];
    expect(journal.writeInto(ledger)).toBe(1);
    for (const entry of again) journal.append([entry], false);
    expect(journal.writeInto(ledger)).toBe(1);
    expect(ledger.getDelivery(INPUT.obligationId)).toMatchObject({ state: 'delivered', chunksDelivered: 4 });
  });

  it('says false, and logs, when the disk refuses it', () => {
    const dir = tempDir();
    const logged: string[] = [];
    const journal = new UnrecordedJournal(join(dir, 'missing', UNRECORDED_FILE), createLineLogger({ write: (line) => logged.push(line) }));
    expect(journal.append([{ kind: 'reply', input: INPUT }], true)).toBe(false);
    expect(logged.join('\n')).toMatch(/journal of replies sent unrecorded could not be written/);
  });
});
