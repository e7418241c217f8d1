import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../logger';
import { InboxJournal } from './inbox-journal';
import type { IncomingSignalMessage } from './inbound';

const message = (timestamp: number): IncomingSignalMessage => ({
  author: '+15550000002',
  authorNumber: '+15550000002',
  authorUuid: undefined,
  authorName: 'Alice',
  timestamp,
  text: `text ${timestamp}`,
  groupId: undefined,
  groupName: undefined,
  addressed: false,
});

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'homing-signal-journal-'));
  dirs.push(dir);
  return dir;
}

describe('the Signal inbox journal', () => {
  it('gives back, after a restart, what was taken and not marked done, in order', () => {
    const dir = dataDir();
    const first = InboxJournal.forAccount(dir, '+15550000001', silentLogger);
    first.got('a', message(1));
    first.got('b', message(2));
    first.got('c', message(3));
    first.done('b');
    // No close: the process died.
    const second = InboxJournal.forAccount(dir, '+15550000001', silentLogger);
    expect(second.unsaved().map((entry) => [entry.ref, entry.message.text])).toEqual([
      ['a', 'text 1'],
      ['c', 'text 3'],
    ]);
  });

  it('empties its file once nothing is pending, and skips a torn last line', () => {
    const dir = dataDir();
    const journal = InboxJournal.forAccount(dir, '+15550000001', silentLogger);
    journal.got('a', message(1));
    expect(statSync(journal.path).size).toBeGreaterThan(0);
    journal.done('a');
    expect(statSync(journal.path).size).toBe(0);
    journal.got('b', message(2));
    appendFileSync(journal.path, '{"t":"got","ref":"c","mess');
    const again = InboxJournal.forAccount(dir, '+15550000001', silentLogger);
    expect(again.unsaved().map((entry) => entry.ref)).toEqual(['b']);
  });

  it('gives a message back with its files’ offers after a restart, and drops only an offer that no longer reads', () => {
    const dir = dataDir();
    const offer = { kind: 'image' as const, source: 'sg:p1.jpg:10:+15550000002', mime: 'image/jpeg', size: 10 };
    const first = InboxJournal.forAccount(dir, '+15550000001', silentLogger);
    first.got('a', { ...message(1), media: [offer] });
    appendFileSync(first.path, `${JSON.stringify({ t: 'got', ref: 'b', message: { ...message(2), media: [offer, { kind: 'image', source: '/etc/passwd' }, 'junk'] } })}\n`);
    appendFileSync(first.path, `${JSON.stringify({ t: 'got', ref: 'c', message: { ...message(3), media: 'not a list' } })}\n`);
    const second = InboxJournal.forAccount(dir, '+15550000001', silentLogger);
    expect(second.unsaved().map((entry) => [entry.ref, entry.message.text, entry.message.media])).toEqual([
      ['a', 'text 1', [offer]],
      ['b', 'text 2', [offer]],
      ['c', 'text 3', undefined],
    ]);
  });

  it('keeps one journal per account, named by a hash and not by the number', () => {
    const dir = dataDir();
    const journal = InboxJournal.forAccount(dir, '+15550000001', silentLogger);
    journal.got('a', message(1));
    expect(journal.path).not.toContain('15550000001');
    expect(InboxJournal.forAccount(dir, '+15550000009', silentLogger).unsaved()).toEqual([]);
  });

  it('writes nothing after it is closed', () => {
    const dir = dataDir();
    const journal = InboxJournal.forAccount(dir, '+15550000001', silentLogger);
    journal.got('a', message(1));
    journal.close();
    journal.got('b', message(2));
    journal.done('a');
    expect(readFileSync(journal.path, 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
  });
});
