import { appendFileSync, fdatasync, fstatSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readLinesBackward, readLinesForward, readLinesForwardSliced, repairTornTail, TranscriptFiles } from './transcript-file';
import { readContext } from './transcript-reader';
import { formatRecord, type TranscriptRecord } from './transcript-record';

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'homing-transcript-'));
  file = join(dir, 't.jsonl');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function backward(path: string): string[] {
  const lines: string[] = [];
  readLinesBackward(path, (line) => (lines.push(line), true));
  return lines.reverse();
}
function forward(path: string): string[] {
  const lines: string[] = [];
  readLinesForward(path, (line) => (lines.push(line), true));
  return lines;
}

const turn = (index: number, text = `message ${index}`): TranscriptRecord =>
  index % 2 === 0
    ? { type: 'user', at: index, sender: { id: 'user_000000000000' }, text }
    : { type: 'assistant', at: index, obligationId: `o${index}`, text };

describe('reading lines', () => {
  it('reads the same lines backward and forward, across chunk boundaries and multi-byte characters', () => {
    // Lines of awkward lengths (some longer than a 64 KiB chunk) made of multi-byte characters.
    const lines = Array.from({ length: 60 }, (_, i) => `${i}:` + 'ü✓😀'.repeat((i * 997) % 30_000));
    writeFileSync(file, lines.join('\n') + '\n');
    expect(backward(file)).toEqual(lines);
    expect(forward(file)).toEqual(lines);
  });

  it('reads the same lines in slices, yielding to the event loop between them, and stops when told', async () => {
    const lines = Array.from({ length: 60 }, (_, i) => `${i}:` + 'ü✓😀'.repeat((i * 997) % 30_000));
    writeFileSync(file, lines.join('\n') + '\n' + 'a torn tail');
    const read: string[] = [];
    let turns = 0;
    const ticking = setInterval(() => turns++, 0);
    await readLinesForwardSliced(file, (line) => (read.push(line), true), 16_384);
    clearInterval(ticking);
    expect(read).toEqual(lines);
    expect(turns).toBeGreaterThan(0); // timers ran while it read
    const first: string[] = [];
    await readLinesForwardSliced(file, (line) => (first.push(line), first.length < 3));
    expect(first).toEqual(lines.slice(0, 3));
  });

  it('skips a torn last line (no newline yet) in both directions', () => {
    writeFileSync(file, 'one\ntwo\nthr');
    expect(backward(file)).toEqual(['one', 'two']);
    expect(forward(file)).toEqual(['one', 'two']);
  });

  it('reads nothing from a file that is all torn tail, empty or missing', () => {
    writeFileSync(file, 'no newline at all');
    expect(backward(file)).toEqual([]);
    expect(forward(file)).toEqual([]);
    writeFileSync(file, '');
    expect(backward(file)).toEqual([]);
    expect(forward(file)).toEqual([]);
    expect(backward(join(dir, 'missing.jsonl'))).toEqual([]);
    expect(forward(join(dir, 'missing.jsonl'))).toEqual([]);
  });
});

describe('repairTornTail', () => {
  it('cuts everything after the last newline and nothing before it', () => {
    writeFileSync(file, 'one\ntwo\n{"type":"user","te');
    expect(repairTornTail(file)).toBe('{"type":"user","te'.length);
    expect(readFileSync(file, 'utf8')).toBe('one\ntwo\n');
    expect(repairTornTail(file)).toBe(0);
  });

  it('leaves a whole file alone', () => {
    writeFileSync(file, 'one\n');
    expect(repairTornTail(file)).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe('one\n');
  });
});

describe('TranscriptFiles', () => {
  it('creates the file private to the user and appends whole lines', async () => {
    const files = new TranscriptFiles();
    await files.append(file, formatRecord(turn(0)), true);
    await files.append(file, formatRecord(turn(1)), false);
    files.closeAll();
    if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readContext(file).turns).toEqual([turn(0), turn(1)]);
  });

  it('shares fdatasyncs: a burst of durable appends costs two, each resolved by one that started after its line', async () => {
    // Each sync notes how much of the file it covers (its size when it starts), and the
    // syncs that have ended are counted: an append resolves on the last one that ended.
    const syncs: number[] = [];
    let ended = 0;
    const files = new TranscriptFiles({
      fdatasync: (fd, done) => {
        syncs.push(fstatSync(fd).size);
        fdatasync(fd, (error) => {
          ended += 1;
          done(error);
        });
      },
    });
    const ends: number[] = [];
    const covered: Promise<number>[] = [];
    for (let i = 0; i < 50; i++) {
      const durable = files.append(file, formatRecord(turn(i)), true);
      ends.push(statSync(file).size);
      covered.push(durable.then(() => syncs[ended - 1]!));
    }
    const seen = await Promise.all(covered);
    expect(syncs).toHaveLength(2);
    seen.forEach((size, i) => expect(size).toBeGreaterThanOrEqual(ends[i]!));
    // Later, alone: a sync of its own.
    await files.append(file, formatRecord(turn(50)), true);
    expect(syncs).toHaveLength(3);
    files.closeAll();
    expect(readContext(file, { maxTurns: 100 }).turns).toHaveLength(51);
  });

  it('rejects every append that shared a failed fdatasync, and syncs again for the next', async () => {
    let calls = 0;
    const files = new TranscriptFiles({
      fdatasync: (fd, done) => {
        calls += 1;
        if (calls === 2) done(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
        else fdatasync(fd, done);
      },
    });
    const first = files.append(file, formatRecord(turn(0)), true);
    const shared = Promise.allSettled([1, 2, 3].map((i) => files.append(file, formatRecord(turn(i)), true)));
    await expect(first).resolves.toBeUndefined();
    for (const outcome of await shared) expect(outcome).toMatchObject({ status: 'rejected', reason: { code: 'EIO' } });
    await expect(files.append(file, formatRecord(turn(4)), true)).resolves.toBeUndefined();
    expect(calls).toBe(3);
    files.closeAll();
  });
});

describe('readContext', () => {
  it('returns the last N turns in order, from the end of the file', () => {
    for (let i = 0; i < 10; i++) appendFileSync(file, formatRecord(turn(i)));
    const context = readContext(file, { maxTurns: 3 });
    expect(context.turns.map((t) => t.at)).toEqual([7, 8, 9]);
    expect(context.truncated).toBe(true);
  });

  it('stops at a character budget without splitting a turn', () => {
    for (let i = 0; i < 10; i++) appendFileSync(file, formatRecord(turn(i, 'x'.repeat(100))));
    const context = readContext(file, { maxTurns: 50, maxChars: 350 });
    expect(context.turns.map((t) => t.at)).toEqual([7, 8, 9]);
    expect(context.truncated).toBe(true);
  });

  it('stops at the session header and skips lines that are not records', () => {
    appendFileSync(file, formatRecord({ type: 'session', v: 1, sessionId: 's', sessionKey: 'k', createdAt: 0, platform: 'irc', chatType: 'group', chat: 'irc:0' }));
    appendFileSync(file, formatRecord(turn(0)) + 'not json\n' + '{"type":"from-the-future"}\n' + formatRecord(turn(1)));
    const context = readContext(file, { maxTurns: 50 });
    expect(context.turns).toEqual([turn(0), turn(1)]);
    expect(context.truncated).toBe(false);
  });

  it('reads about the same number of bytes for the last 50 turns of a short and a very long transcript', () => {
    const long = join(dir, 'long.jsonl');
    const short = join(dir, 'short.jsonl');
    writeFileSync(long, Array.from({ length: 50_000 }, (_, i) => formatRecord(turn(i))).join(''));
    writeFileSync(short, Array.from({ length: 100 }, (_, i) => formatRecord(turn(i))).join(''));
    const fromLong = readContext(long, { maxTurns: 50 });
    const fromShort = readContext(short, { maxTurns: 50 });
    expect(fromLong.turns.map((t) => t.at)).toEqual(Array.from({ length: 50 }, (_, i) => 49_950 + i));
    expect(statSync(long).size).toBeGreaterThan(40 * 64 * 1024); // far more than one chunk
    expect(fromLong.bytesRead).toBeLessThanOrEqual(64 * 1024);
    expect(fromLong.bytesRead).toBeLessThanOrEqual(2 * Math.max(fromShort.bytesRead, 64 * 1024));
  });
});
