import { join } from 'node:path';
import type { Bench, BenchContext } from './harness';
import { medianMs } from './harness';
import { systemClock } from '../src/main/gateway/clock';
import { openDatabase, setSynchronous, type Db } from '../src/main/gateway/db/database';
import { homingMigrations } from '../src/main/gateway/db/migrations';
import { DeliveryService } from '../src/main/gateway/delivery/delivery-service';
import type { PlatformSender } from '../src/main/gateway/delivery/sender';
import { EventBus } from '../src/main/gateway/events';
import { Ledger } from '../src/main/gateway/ledger';
import { silentLogger } from '../src/main/gateway/logger';
import { registerInstance } from '../src/main/gateway/ledger/instances';
import { createSystemProbe } from '../src/main/gateway/ledger/process-identity';

const CYCLES = 2_000;
const CONVERSATIONS = 100;
/** A realistic reply: about 340 characters, one message on every platform. */
const REPLY = 'Sure — here is what I found. '.repeat(12).slice(0, 340);
const OWED = 1_000;
const LIVE_ROWS = 100_000;

/**
 * The ledger's price, measured side by side on one directory:
 *  - raw fsynced single-row commits (WAL, synchronous=FULL), the floor;
 *  - durable record → send → delivered cycles through the delivery service, one
 *    conversation after another (one fsynced commit per reply: ~1× the floor is
 *    the best it can do) and 100 conversations at once (group commit: one fsync
 *    for every conversation's record of a turn, so well above the floor);
 *  - the sweep with 100 000 rows a live instance is sending (it reads none of them)
 *    and with 1 000 owed rows among 10 000 and 1 000 000 (the ratio stays near 1).
 */
const bench: Bench = {
  name: 'delivery ledger',
  async run(context) {
    const dir = context.tmpDir();
    const raw = rawCommitRate(dir);
    const one = await cycleRate(context.tmpDir(), 1);
    const many = await cycleRate(context.tmpDir(), CONVERSATIONS);
    context.report(`cycles, ${REPLY.length}-char replies, ${CYCLES} cycles`, {
      raw_commits_per_s: raw,
      one_conversation_per_s: one,
      ratio_1: one / raw,
      [`${CONVERSATIONS}_conversations_per_s`]: many,
      [`ratio_${CONVERSATIONS}`]: many / raw,
    });

    const live = liveOwnedSweepMs(context);
    context.report(`sweep, ${LIVE_ROWS} rows a live instance sends`, { sweep_ms: live });

    const small = sweepMs(context, 10_000);
    const large = sweepMs(context, 1_000_000);
    context.report(`sweep with ${OWED} owed rows`, {
      rows_10k_ms: small,
      rows_1M_ms: large,
      ratio: large / small,
    });
  },
};
export default bench;

function rawCommitRate(dir: string): number {
  const db = openDatabase(join(dir, 'raw.db'), { migrations: [] });
  setSynchronous(db, 'FULL');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  const start = performance.now();
  for (let i = 0; i < CYCLES; i++) insert.run(`row ${i}`);
  const rate = CYCLES / ((performance.now() - start) / 1000);
  db.close();
  return rate;
}

/** A platform that confirms every chunk on the next turn of the event loop (no network: the ledger's cost alone). */
function instantPlatform(): PlatformSender {
  let n = 0;
  return {
    name: 'bench',
    serverIdempotency: false,
    send: () => new Promise((resolve) => setImmediate(() => resolve({ ok: true, platformMessageId: `m${n++}` }))),
  };
}

/** Durable cycles per second: `conversations` loops at once, each recording and sending its replies one after another. */
async function cycleRate(dir: string, conversations: number): Promise<number> {
  const db = openDatabase(join(dir, 'homing.db'), { migrations: homingMigrations });
  const service = DeliveryService.start({ db, clock: systemClock, logger: silentLogger, bus: new EventBus(silentLogger), exclusive: true });
  service.registerPlatform(instantPlatform());
  const perConversation = Math.ceil(CYCLES / conversations);
  const start = performance.now();
  await Promise.all(
    Array.from({ length: conversations }, async (_, c) => {
      for (let i = 0; i < perConversation; i++) {
        const sessionKey = `agent:main:bench:direct:${c}`;
        const outcome = await service.deliverReply('bench', {
          sessionKey,
          messageRef: `msg-${i}`,
          chatId: `chat-${c}`,
          threadId: null,
          replyTo: null,
          content: `${i} ${REPLY}`,
          chunks: [],
        });
        if (outcome.status !== 'delivered') throw new Error(`bench: reply ${c}/${i} not delivered: ${outcome.status}`);
      }
    }),
  );
  const rate = (perConversation * conversations) / ((performance.now() - start) / 1000);
  await service.stop();
  db.close();
  return rate;
}

/** Median sweep while another live instance (this very process, registered again) owns LIVE_ROWS attempting rows. */
function liveOwnedSweepMs(context: BenchContext): number {
  const db = openDatabase(join(context.tmpDir(), 'homing.db'), { migrations: homingMigrations });
  const now = Date.now();
  registerInstance(db, 'live-sender', createSystemProbe().self(), now);
  const insert = db.prepare(
    `INSERT INTO ledger_obligations
       (id, session_key, platform, chat_id, content, state, owner_instance, created_at, updated_at, chunk_count, seq, fence)
     VALUES (?, ?, 'irc', 'bench', 'a reply', 'attempting', 'live-sender', ?, ?, 1, 1, 1)`,
  );
  db.transaction(() => {
    for (let i = 0; i < LIVE_ROWS; i++) insert.run(i.toString(16).padStart(24, '0'), `agent:main:irc:direct:${i}`, now, now);
  })();
  const ledger = new Ledger({ db, clock: systemClock });
  ledger.register();
  ledger.sweepRecoverable({ now: Date.now(), deliverablePlatforms: [] });
  const ms = medianMs(15, () => {
    const outcome = ledger.sweepRecoverable({ now: Date.now(), deliverablePlatforms: [{ name: 'irc', serverIdempotency: false }] });
    if (outcome.claimed.length !== 0 || outcome.report.owed !== LIVE_ROWS) throw new Error(`bench: the sweep took a live instance's rows`);
  });
  db.close();
  return ms;
}

/** Median time of a sweep (no platform connected: it finds, judges and credits, claims nothing). */
function sweepMs(context: BenchContext, total: number): number {
  const db = openDatabase(join(context.tmpDir(), 'homing.db'), { migrations: homingMigrations });
  fill(db, total);
  const ledger = new Ledger({ db, clock: systemClock });
  let now = Date.now();
  ledger.sweepRecoverable({ now, deliverablePlatforms: [] }); // warm up, tombstone the dead owner
  const ms = medianMs(7, () => {
    now += 1000;
    const outcome = ledger.sweepRecoverable({ now, deliverablePlatforms: [] });
    if (outcome.report.waitingForPlatform !== OWED) throw new Error(`expected ${OWED} owed rows, saw ${outcome.report.waitingForPlatform}`);
  });
  db.close();
  return ms;
}

/** `total` rows in one transaction: all delivered (recently, so none is pruned) but OWED pending ones, each its conversation's head. */
function fill(db: Db, total: number): void {
  const now = Date.now();
  db.prepare(
    `INSERT INTO ledger_instances (id, pid, host, started_at, heartbeat_at, stopped_at) VALUES ('gone', 1, 'bench', ?, ?, ?)`,
  ).run(now, now, now);
  const insert = db.prepare(
    `INSERT INTO ledger_obligations
       (id, session_key, platform, chat_id, content, state, attempts, owner_instance, created_at, updated_at,
        delivered_at, chunk_count, chunks_delivered, seq)
     VALUES (?, ?, 'irc', 'bench', 'a reply', ?, ?, 'gone', ?, ?, ?, 1, ?, ?)`,
  );
  db.transaction(() => {
    for (let i = 0; i < total; i++) {
      const owed = i % Math.floor(total / OWED) === 0;
      const id = i.toString(16).padStart(24, '0');
      if (owed) insert.run(id, `agent:main:irc:direct:owed-${i}`, 'pending', 0, now, now, null, 0, 1);
      else insert.run(id, `agent:main:irc:direct:${i % 5_000}`, 'delivered', 1, now, now, now, 1, i);
    }
  })();
}
