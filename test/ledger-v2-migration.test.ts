import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { Clock } from '../src/main/gateway/clock';
import { openDatabase, type Db } from '../src/main/gateway/db/database';
import { homingMigrations } from '../src/main/gateway/db/migrations';
import { DeliveryService } from '../src/main/gateway/delivery/delivery-service';
import { RESEND_MARKER, withResendMarker } from '../src/main/gateway/delivery/marker';
import type { PlatformSender, SendTarget } from '../src/main/gateway/delivery/sender';
import { EventBus } from '../src/main/gateway/events';
import { Ledger } from '../src/main/gateway/ledger';
import { silentLogger } from '../src/main/gateway/logger';
import { waitUntil } from './support/wait';

/**
 * A data dir written by the ledger of commit bf0710b (test/fixtures/ledger-v2,
 * see its README), opened by today's code: whatever the schema has become, every
 * reply it held reads back the same through the ledger's public API, and a
 * gateway started on it sends exactly what was owed — once, in order, the parts
 * that may have arrived with the resend marker — and nothing that was settled.
 * Only the public API is used here: no table or column name.
 */

const FIXTURE = fileURLToPath(new URL('./fixtures/ledger-v2/', import.meta.url));

interface ExpectedChunk {
  readonly index: number;
  readonly text: string;
  readonly state: 'owed' | 'sending' | 'delivered';
  readonly may_have_arrived: number;
  readonly idempotency_key: string;
}

interface ExpectedRow {
  readonly id: string;
  readonly session_key: string;
  readonly seq: number;
  readonly platform: string;
  readonly chat_id: string;
  readonly thread_id: string | null;
  readonly reply_to: string | null;
  readonly state: 'pending' | 'attempting' | 'delivered' | 'failed' | 'abandoned';
  readonly attempts: number;
  readonly next_attempt_at: number | null;
  readonly chunk_count: number;
  readonly chunks_delivered: number;
  readonly content: string;
  readonly abandon_reason: string | null;
  readonly last_error: string | null;
  readonly owner_instance: string | null;
  readonly created_at: number;
  readonly chunks: readonly ExpectedChunk[];
}

interface Expected {
  readonly fixtureClockEnd: number;
  readonly obligations: readonly ExpectedRow[];
}

const expected = JSON.parse(readFileSync(join(FIXTURE, 'expected.json'), 'utf8')) as Expected;
const rows = expected.obligations;
/** states.ts OWED: pending, attempting, or failed with a retry scheduled. */
const isOwed = (row: ExpectedRow) => row.state === 'pending' || row.state === 'attempting' || (row.state === 'failed' && row.next_attempt_at !== null);
const owed = rows.filter(isOwed);
const settled = rows.filter((row) => !isOwed(row));

/** Platforms whose server deduplicates a resend by its key (no marker needed there). */
const DEDUPLICATING = new Set(['matrix']);

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The fixture's homing.db, copied to a temp data dir and opened as the gateway opens it (running any new migration). */
function openFixture(): Db {
  const dir = mkdtempSync(join(tmpdir(), 'homing-ledger-v2-'));
  dirs.push(dir);
  const file = join(dir, 'homing.db');
  copyFileSync(join(FIXTURE, 'homing.db'), file);
  return openDatabase(file, { migrations: homingMigrations });
}

/** A clock the test sets: after every scheduled retry of the fixture, within the retention of its delivered rows. */
class FixedClock implements Clock {
  constructor(public time: number) {}
  now(): number {
    return this.time;
  }
  monotonic(): number {
    return this.time;
  }
}
const AFTER_EVERY_RETRY = Math.max(expected.fixtureClockEnd, ...rows.map((row) => row.next_attempt_at ?? 0)) + 60 * 60 * 1000;

interface Sent {
  readonly platform: string;
  readonly chatId: string;
  readonly threadId: string | null;
  readonly text: string;
  readonly idempotencyKey: string;
}

/** A platform that confirms every part on the next turn of the event loop, and remembers what it was sent. */
function recordingPlatform(name: string, sent: Sent[]): PlatformSender {
  return {
    name,
    serverIdempotency: DEDUPLICATING.has(name),
    send: (text: string, target: SendTarget) =>
      new Promise((resolve) =>
        setImmediate(() => {
          sent.push({ platform: name, chatId: target.chatId, threadId: target.threadId, text, idempotencyKey: target.idempotencyKey });
          resolve({ ok: true, platformMessageId: `${name}-${sent.length}` });
        }),
      ),
  };
}

/** A conversation's key for what was sent to it (the fixture's conversations each have a chat of their own). */
const chatOf = (platform: string, chatId: string) => `${platform} ${chatId}`;

describe('the ledger-v2 fixture (a data dir of commit bf0710b) opened by this code', () => {
  it('is the fixture it claims to be (every kind of row the migration must keep)', () => {
    expect(rows.length).toBeGreaterThanOrEqual(15);
    expect(owed.length).toBeGreaterThan(0);
    const kinds = new Set(rows.map((row) => (row.state === 'failed' ? (row.next_attempt_at === null ? 'failed for good' : 'failed, retry due') : row.state)));
    expect([...kinds].sort()).toEqual(['abandoned', 'attempting', 'delivered', 'failed for good', 'failed, retry due', 'pending']);
    expect(rows.some((row) => row.chunks.some((chunk) => chunk.state === 'sending'))).toBe(true);
    expect(rows.some((row) => row.chunks.some((chunk) => chunk.state === 'owed' && chunk.may_have_arrived === 1))).toBe(true);
  });

  it('reads back every reply the same: state, attempts and parts delivered, its whole text, and the owed count', () => {
    const db = openFixture();
    const ledger = new Ledger({ db, clock: new FixedClock(AFTER_EVERY_RETRY), newInstanceId: () => 'migration-reader' });
    for (const row of rows) {
      expect(ledger.getDelivery(row.id), `reply ${row.session_key} #${row.seq}`).toMatchObject({
        id: row.id,
        state: row.state,
        attempts: row.attempts,
        chunksDelivered: row.chunks_delivered,
        chunksTotal: row.chunk_count,
      });
      expect(ledger.deliveryText(row.id), `text of ${row.session_key} #${row.seq}`).toBe(row.content);
      // Its parts, each its own text and state (delivered rows are copied in bulk, the rest one by one).
      expect(
        ledger.chunks(row.id).map((chunk) => [chunk.text, chunk.state]),
        `parts of ${row.session_key} #${row.seq}`,
      ).toEqual(row.chunks.map((chunk) => [chunk.text, chunk.state === 'delivered' || row.state === 'delivered' ? 'delivered' : chunk.state]));
    }
    expect(ledger.owedCount()).toBe(owed.length);
    db.close();
  });

  it('reads back the rest of what the Deliveries window shows: where each reply goes, its error, its next attempt, when it was made', () => {
    const db = openFixture();
    const ledger = new Ledger({ db, clock: new FixedClock(AFTER_EVERY_RETRY), newInstanceId: () => 'migration-reader' });
    for (const row of rows) {
      expect(ledger.getDelivery(row.id), `reply ${row.session_key} #${row.seq}`).toMatchObject({
        sessionKey: row.session_key,
        platform: row.platform,
        chatId: row.chat_id,
        threadId: row.thread_id,
        nextAttemptAt: row.next_attempt_at,
        lastError: row.last_error,
        abandonReason: row.abandon_reason,
        createdAt: row.created_at,
      });
    }
    db.close();
  });

  it('a gateway started on it sends each owed part once, in its conversation’s order, marked where it may have arrived, and nothing settled', async () => {
    const db = openFixture();
    const clock = new FixedClock(AFTER_EVERY_RETRY);
    const service = DeliveryService.start({ db, clock, logger: silentLogger, bus: new EventBus(silentLogger), exclusive: true });
    try {
      // The start-up sweep, no platform connected yet: everything owed is still owed, nothing given up.
      expect(service.lastSweep()?.report).toMatchObject({
        claimed: 0,
        abandoned: 0,
        owed: owed.length,
        waitingForPlatform: new Set(owed.map((row) => row.session_key)).size,
      });

      const sent: Sent[] = [];
      for (const platform of new Set(rows.map((row) => row.platform))) service.registerPlatform(recordingPlatform(platform, sent));
      service.sweepNow();
      await waitUntil('every owed reply delivered', () => service.ledger.owedCount() === 0 && owed.every((row) => service.ledger.getDelivery(row.id)?.state === 'delivered'));
      await service.stop();

      // What each conversation should have received: its owed replies in seq order, each from its first undelivered part.
      const want = new Map<string, Sent[]>();
      let marked = 0;
      for (const row of [...owed].sort((a, b) => (a.session_key < b.session_key ? -1 : a.session_key > b.session_key ? 1 : a.seq - b.seq))) {
        const chat = chatOf(row.platform, row.chat_id);
        const list = want.get(chat) ?? [];
        want.set(chat, list);
        for (const chunk of row.chunks) {
          if (chunk.state === 'delivered') continue;
          const mayHaveArrived = chunk.state === 'sending' || chunk.may_have_arrived === 1;
          const marker = mayHaveArrived && !DEDUPLICATING.has(row.platform);
          if (marker) marked += 1;
          list.push({
            platform: row.platform,
            chatId: row.chat_id,
            threadId: row.thread_id,
            text: marker ? withResendMarker(chunk.text) : chunk.text,
            idempotencyKey: chunk.idempotency_key,
          });
        }
      }
      const got = new Map<string, Sent[]>();
      for (const request of sent) {
        const chat = chatOf(request.platform, request.chatId);
        got.set(chat, [...(got.get(chat) ?? []), request]);
      }
      // Per conversation, exactly these parts in this order: none twice, none already delivered, none of a settled reply.
      expect(Object.fromEntries(got)).toEqual(Object.fromEntries(want));
      expect(marked).toBeGreaterThanOrEqual(2);
      expect(sent.filter((request) => request.text.startsWith(RESEND_MARKER))).toHaveLength(marked);
      expect(sent.filter((request) => request.text.includes(RESEND_MARKER))).toHaveLength(marked);
      // No part of a settled reply went out (also when it shares its text with nothing owed).
      const settledTexts = new Set(settled.flatMap((row) => row.chunks.filter((chunk) => chunk.state !== 'delivered').map((chunk) => chunk.idempotency_key)));
      expect(sent.filter((request) => settledTexts.has(request.idempotencyKey))).toEqual([]);

      // Afterwards: every owed reply delivered in full; every settled one as it was; nothing owed.
      for (const row of owed) {
        expect(service.ledger.getDelivery(row.id), `reply ${row.session_key} #${row.seq}`).toMatchObject({
          state: 'delivered',
          attempts: row.attempts,
          chunksDelivered: row.chunk_count,
          chunksTotal: row.chunk_count,
        });
      }
      for (const row of settled) {
        expect(service.ledger.getDelivery(row.id), `reply ${row.session_key} #${row.seq}`).toMatchObject({
          state: row.state,
          attempts: row.attempts,
          chunksDelivered: row.chunks_delivered,
          chunksTotal: row.chunk_count,
        });
      }
      expect(service.ledger.owedCount()).toBe(0);
    } finally {
      await service.stop();
      db.close();
    }
  });
});
