import { join } from 'node:path';
import type { Bench, BenchContext } from './harness';
import { medianMs } from './harness';
import { systemClock } from '../src/main/gateway/clock';
import { openDatabase, type Db } from '../src/main/gateway/db/database';
import { homingMigrations } from '../src/main/gateway/db/migrations';
import { computeObligationId, Ledger } from '../src/main/gateway/ledger';

const CYCLES = 200;
const OWED = 1_000;

/**
 * The ledger's price: how many durable record→attempting→delivered cycles per
 * second, next to the raw SQLite commit rate on the same directory (each cycle
 * is three fsynced commits, so ~0.33 is the best it can reach); and the sweep's
 * cost with 10 000 and 1 000 000 rows of which 1 000 are owed (the partial
 * indexes should keep the ratio near 1).
 */
const bench: Bench = {
  name: 'delivery ledger',
  async run(context) {
    const dir = context.tmpDir();
    const raw = rawCommitRate(dir);
    const cycles = cycleRate(dir);
    context.report('durable commits (WAL, synchronous=FULL)', {
      raw_commits_per_s: raw,
      ledger_cycles_per_s: cycles,
      ratio: cycles / raw,
    });

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
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  const start = performance.now();
  for (let i = 0; i < CYCLES * 3; i++) insert.run(`row ${i}`);
  const rate = (CYCLES * 3) / ((performance.now() - start) / 1000);
  db.close();
  return rate;
}

function cycleRate(dir: string): number {
  const db = openDatabase(join(dir, 'homing.db'), { migrations: homingMigrations });
  const ledger = new Ledger({ db, clock: systemClock });
  ledger.register();
  const start = performance.now();
  for (let i = 0; i < CYCLES; i++) {
    const content = `reply number ${i}`;
    const id = computeObligationId('agent:main:irc:direct:bench', `msg-${i}`, content);
    ledger.recordObligation({
      obligationId: id,
      sessionKey: 'agent:main:irc:direct:bench',
      platform: 'irc',
      chatId: 'bench',
      threadId: null,
      replyTo: null,
      content,
      chunks: [content],
    });
    const claimed = ledger.markAttempting(id);
    if (!claimed.ok) throw new Error(`bench: cannot claim ${id}: ${claimed.reason}`);
    ledger.markDelivered(claimed.claim.receipt, { index: 0, platformMessageId: `bench-${i}` });
  }
  const rate = CYCLES / ((performance.now() - start) / 1000);
  db.close();
  return rate;
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

/** `total` rows in one transaction: all delivered (recently, so none is pruned) but OWED pending ones. */
function fill(db: Db, total: number): void {
  const now = Date.now();
  db.prepare(
    `INSERT INTO ledger_instances (id, pid, host, started_at, heartbeat_at, stopped_at) VALUES ('gone', 1, 'bench', ?, ?, ?)`,
  ).run(now, now, now);
  const insert = db.prepare(
    `INSERT INTO ledger_obligations
       (id, session_key, platform, chat_id, content, state, attempts, owner_instance, created_at, updated_at,
        delivered_at, chunk_count, chunks_delivered)
     VALUES (?, 'agent:main:irc:direct:bench', 'irc', 'bench', 'a reply', ?, ?, 'gone', ?, ?, ?, 1, ?)`,
  );
  db.transaction(() => {
    for (let i = 0; i < total; i++) {
      const owed = i % Math.floor(total / OWED) === 0;
      const id = i.toString(16).padStart(24, '0');
      if (owed) insert.run(id, 'pending', 0, now, now, null, 0);
      else insert.run(id, 'delivered', 1, now, now, now, 1);
    }
  })();
}
