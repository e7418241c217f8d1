import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../clock';
import { openTestDb, removeTempDirs, startFixture, tempDir, testLedger } from '../ledger/fixtures/test-ledger';
import { silentLogger } from '../logger';
import { Deliverer } from './deliverer';
import { FOUR_PART_REPLY_ID } from './fixtures/replies';
import { visibleMessages, wirePlatform } from './fixtures/wire-platform';
import { RESEND_MARKER, withResendMarker } from './marker';
import { UNRECORDED_FILE, UnrecordedJournal } from './unrecorded-journal';

afterEach(removeTempDirs);

const CHILD = fileURLToPath(new URL('./fixtures/crash-child.ts', import.meta.url));
const PARTS = ['part 1 of 4', 'part 2 of 4', 'part 3 of 4', 'part 4 of 4'];

/**
 * Runs a gateway in a child process up to `mode` at chunk `index`, kills it with
 * SIGKILL there, then recovers in this process: the sweep claims the row and the
 * delivery loop finishes it. Returns the platform's requests before and after.
 */
async function crashAndRecover(mode: 'after-record' | 'during-send' | 'before-wire' | 'ledger-failing' | 'unrecorded', index: number, serverIdempotency: boolean) {
  const dir = tempDir();
  const file = join(dir, 'homing.db');
  const wire = join(dir, 'wire.jsonl');
  openTestDb(file).close();
  const child = startFixture(CHILD, [file, wire, mode, String(index), serverIdempotency ? '1' : '0']);
  const lines: string[] = [];
  await child.waitForLine((line) => lines.push(line) > 0 && line === 'ready');
  child.process.kill('SIGKILL');
  const { signal } = await child.exited;
  expect(signal).toBe('SIGKILL');

  const platform = wirePlatform(wire, { serverIdempotency });
  const before = platform.requests();
  const db = openTestDb(file);
  const ledger = testLedger(db, systemClock);
  const deliverable = [{ name: platform.name, serverIdempotency }];
  // What a start does first (Deliverer.flushFacts): replies sent while the ledger failed go into it.
  const journal = new UnrecordedJournal(join(dir, UNRECORDED_FILE), silentLogger);
  const journaled = journal.holdsReplies() ? journal.writeInto(ledger) : 0;
  // Its heartbeat is still fresh, but its pid is provably gone (same pid namespace): the row is ours at once.
  const sweep = ledger.sweepRecoverable({ now: Date.now(), deliverablePlatforms: deliverable });
  expect(sweep.claimed.map((claim) => claim.id)).toEqual([FOUR_PART_REPLY_ID]);
  const claim = sweep.claimed[0]!;

  const outcome = await new Deliverer({ ledger, clock: systemClock, logger: silentLogger }).deliverClaimed(claim, platform);
  expect(outcome.status).toBe('delivered');
  expect(ledger.getDelivery(claim.id)).toMatchObject({ state: 'delivered', chunksDelivered: 4, attempts: 0 });
  const after = platform.requests().slice(before.length);
  db.close();
  return { claim, before, after, all: platform.requests(), lines, journaled };
}

describe('recovery after the sending gateway is killed with SIGKILL', () => {
  it('killed after recording, before any chunk left: the whole reply is sent, with no marker', async () => {
    const { claim, before, after } = await crashAndRecover('after-record', 0, false);
    expect(claim).toMatchObject({ needsMarker: false, mayHaveArrived: false, firstChunk: { index: 0 } });
    expect(before).toEqual([]);
    expect(after.map((request) => request.text)).toEqual(PARTS);
  });

  it('killed while chunk 3 was in flight: chunks 1–2 are not resent, chunk 3 is resent with the marker, chunk 4 without', async () => {
    const { claim, before, after } = await crashAndRecover('during-send', 2, false);
    expect(claim).toMatchObject({ needsMarker: true, mayHaveArrived: true, firstChunk: { index: 2 } });
    expect(before.map((request) => request.text)).toEqual(PARTS.slice(0, 3));
    expect(after.map((request) => request.text)).toEqual([withResendMarker(PARTS[2]!), PARTS[3]]);
    expect(after.filter((request) => request.text.includes(RESEND_MARKER))).toHaveLength(1);
  });

  it('chunk resume: with chunks 1–2 of 4 delivered before the kill, only chunks 3–4 are sent after', async () => {
    const { claim, before, after } = await crashAndRecover('before-wire', 2, false);
    expect(claim.chunks.map((chunk) => chunk.state)).toEqual(['delivered', 'delivered', 'sending', 'owed']);
    expect(before.map((request) => request.text)).toEqual(PARTS.slice(0, 2));
    // Chunk 3 had been handed to the send call: nobody can know it did not arrive, so it is marked.
    expect(after.map((request) => request.text)).toEqual([withResendMarker(PARTS[2]!), PARTS[3]]);
  });

  it('on a platform that deduplicates, the resend reuses the chunk’s key and needs no marker', async () => {
    const { claim, before, after, all } = await crashAndRecover('during-send', 2, true);
    expect(claim).toMatchObject({ needsMarker: false, firstChunk: { index: 2 } });
    expect(after.map((request) => request.text)).toEqual(PARTS.slice(2));
    expect(after[0]!.idempotencyKey).toBe(before[2]!.idempotencyKey);
    // What the user sees: each part exactly once.
    expect(visibleMessages(all, true)).toEqual(PARTS);
  });

  it('the ledger failing mid-reply, then SIGKILL: the part it could not mark was never sent, and no part is resent without the marker', async () => {
    const { claim, before, after, lines } = await crashAndRecover('ledger-failing', 1, false);
    expect(lines).toContain('waiting-for-ledger');
    // Chunk 2 went out as the ledger failed (its delivered mark was lost); chunk 3 could not be marked, so it waited.
    expect(before.map((request) => request.text)).toEqual(PARTS.slice(0, 2));
    expect(claim.chunks.map((chunk) => chunk.state)).toEqual(['delivered', 'sending', 'owed', 'owed']);
    expect(after.map((request) => request.text)).toEqual([withResendMarker(PARTS[1]!), PARTS[2], PARTS[3]]);
    // Whatever the user sees twice says so.
    for (const request of after) if (before.some((earlier) => earlier.text === request.text)) throw new Error(`resent plainly: ${request.text}`);
  });

  it('a reply the ledger refused to record, sent unrecorded, then SIGKILL: the next start has its row from the journal, and nothing repeats plainly', async () => {
    const { claim, before, after, journaled } = await crashAndRecover('unrecorded', 2, false);
    expect(journaled).toBe(1);
    // Parts 1–2 were confirmed, part 3 reached the platform unconfirmed: it may have arrived.
    expect(before.map((request) => request.text)).toEqual(PARTS.slice(0, 3));
    expect(claim.chunks.map((chunk) => chunk.state)).toEqual(['delivered', 'delivered', 'sending', 'owed']);
    expect(claim.chunks.slice(2).map((chunk) => chunk.mayHaveArrived)).toEqual([true, false]);
    expect(after.map((request) => request.text)).toEqual([withResendMarker(PARTS[2]!), PARTS[3]]);
  });
});
