import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedStatement, type Db } from '../db/database';
import { EVERY_ROW, FakeMachine, ManualClock, openTestDb, replyIn } from './fixtures/test-ledger';
import { Ledger } from './ledger';
import type { LedgerPolicy } from './policy';
import { chunksOf, type ObligationSql } from './rows';
import { OwedCount, type ClaimedObligation, type DeliverablePlatform } from './sweep';

/**
 * A randomized model test of the ledger: seeded sequences of operations by
 * several simulated gateway processes on one real SQLite file — recording,
 * claiming, sweeping, sending chunk by chunk to a "platform" that receives,
 * refuses or times out, crashes, clock jumps, discard and retry, the platform
 * coming and going — with the promise checked after every step:
 *
 * - no chunk the ledger recorded as delivered is ever sent again;
 * - a chunk that may have arrived is re-sent only with the marker (the model
 *   knows what the platform really received);
 * - no recorded row vanishes or is settled without a reason;
 * - attempts never exceed the cap;
 * - a live owner's row is never claimed by another process, and no row has two
 *   live senders;
 * - within a conversation, no reply is sent before every earlier one is settled.
 *
 * The processes share one pid namespace (FakeMachine): a process is alive until
 * the model crashes it, and a crashed one's pid is gone at once.
 */

const POLICY: Partial<LedgerPolicy> = {
  maxAttempts: 3,
  staleAfterMs: 60 * 60_000,
  maxCreditMs: 5 * 60_000,
  backoffBaseMs: 5_000,
  backoffMaxMs: 60_000,
};
const MAX_ATTEMPTS = 3;
const SLOTS = 3;
const CONVERSATIONS = ['alice', 'bob', 'carol'];
const IRC: DeliverablePlatform = { name: 'irc', serverIdempotency: false };

type Outcome = 'ok' | 'refused' | 'timeout-arrived' | 'timeout-lost' | 'permanent';

type Op =
  /** `drain`: the recording process goes on to claim its conversation's next reply, as the gateway does. */
  | { kind: 'record'; slot: number; conversation: number; chunks: number; drain: boolean }
  | { kind: 'claim'; slot: number; row: number }
  | { kind: 'claimNext'; slot: number; conversation: number }
  | { kind: 'sweep'; slot: number }
  | { kind: 'sendBegin'; slot: number; claim: number; outcome: Outcome }
  | { kind: 'sendFinish'; slot: number; claim: number }
  | { kind: 'stopSending'; slot: number; claim: number }
  | { kind: 'crash'; slot: number; clean: boolean }
  | { kind: 'start'; slot: number }
  | { kind: 'heartbeat'; slot: number }
  | { kind: 'clock'; ms: number }
  | { kind: 'discard'; slot: number; row: number }
  | { kind: 'retry'; slot: number; row: number }
  | { kind: 'platform'; present: boolean };

const slot = fc.nat(SLOTS - 1);
const anyIndex = fc.nat(20);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({
      kind: fc.constant('record' as const),
      slot,
      conversation: fc.nat(CONVERSATIONS.length - 1),
      chunks: fc.integer({ min: 1, max: 3 }),
      drain: fc.boolean(),
    }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('claim' as const), slot, row: anyIndex }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('claimNext' as const), slot, conversation: fc.nat(CONVERSATIONS.length - 1) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('sweep' as const), slot }) },
  {
    weight: 10,
    arbitrary: fc.record({
      kind: fc.constant('sendBegin' as const),
      slot,
      claim: anyIndex,
      outcome: fc.constantFrom<Outcome>('ok', 'ok', 'ok', 'refused', 'timeout-arrived', 'timeout-lost', 'permanent'),
    }),
  },
  { weight: 10, arbitrary: fc.record({ kind: fc.constant('sendFinish' as const), slot, claim: anyIndex }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('stopSending' as const), slot, claim: anyIndex }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('crash' as const), slot, clean: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('start' as const), slot }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('heartbeat' as const), slot }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('clock' as const),
      // forward a little, past a backoff, a lease, a sleep of a day; and back
      ms: fc.constantFrom(1_000, 6_000, 31_000, 5 * 60_000, 25 * 3_600_000, -3_600_000, -10_000),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('discard' as const), slot, row: anyIndex }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('retry' as const), slot, row: anyIndex }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('platform' as const), present: fc.boolean() }) },
);

/** A send the model is in the middle of: begun (marked sending, handed to the platform), outcome not yet recorded. */
interface InFlight {
  readonly index: number;
  readonly outcome: Outcome;
}

interface Sender {
  readonly claim: ClaimedObligation;
  /** Chunk indexes still to send, in order. */
  readonly remaining: number[];
  inFlight: InFlight | null;
  /** The model's step at which it was claimed. */
  readonly claimedAt: number;
}

interface Process {
  readonly pid: number;
  readonly ledger: Ledger;
  readonly senders: Sender[];
}

interface Recorded {
  readonly id: string;
  readonly conversation: string;
  readonly seq: number;
  readonly chunks: number;
}

interface RowSql {
  id: string;
  session_key: string;
  seq: number;
  state: string;
  owner_instance: string | null;
  fence: number;
  attempts: number;
  next_attempt_at: number | null;
  last_error: string | null;
  abandon_reason: string | null;
}

/** What the runs exercised, summed over all of them: checked at the end so a model that stopped doing anything fails. */
const coverage: Record<string, number> = {};
const bump = (what: string): void => {
  coverage[what] = (coverage[what] ?? 0) + 1;
};

class World {
  readonly clock = new ManualClock();
  readonly machine = new FakeMachine();
  readonly slots: (Process | null)[] = Array.from({ length: SLOTS }, () => null);
  readonly recorded: Recorded[] = [];
  /** Every send the platform received: `${id}#${index}` → how many times, and whether each carried the marker. */
  readonly received = new Map<string, boolean[]>();
  /** Chunks a send of which may have reached the platform. */
  readonly mayHaveArrived = new Set<string>();
  /** Chunks the ledger has recorded as delivered, ever. */
  readonly deliveredEver = new Set<string>();
  /** Rows the ledger has recorded as delivered, ever (only these may be pruned). */
  readonly rowsDeliveredEver = new Set<string>();
  /** The step at which the user's Retry last made each row owed again. */
  readonly retriedAt = new Map<string, number>();
  step = 0;
  /** Replies a send of which has begun. */
  readonly started = new Set<string>();
  platformPresent = true;
  private instances = 0;
  private replies = 0;

  constructor(readonly db: Db) {
    for (let n = 0; n < SLOTS; n++) this.start(n);
  }

  platforms(): DeliverablePlatform[] {
    return this.platformPresent ? [IRC] : [];
  }

  start(n: number): void {
    if (this.slots[n]) return;
    const { pid, probe } = this.machine.spawn();
    const ledger = new Ledger({ db: this.db, clock: this.clock, probe, policy: POLICY, newInstanceId: () => `p${n}-${++this.instances}` });
    // The only gateway left: it holds the data directory's lock, as a restart does.
    ledger.register({ exclusive: this.slots.every((other) => other === null) });
    this.slots[n] = { pid, ledger, senders: [] };
  }

  /** Instance ids of processes still running. */
  liveInstances(): Set<string> {
    return new Set(this.slots.filter((p): p is Process => p !== null).map((p) => p.ledger.instanceId));
  }

  rows(): RowSql[] {
    return cachedStatement(this.db, `SELECT *, row AS seq FROM ${EVERY_ROW} ORDER BY session_key, row`).all() as RowSql[];
  }

  /** Every part's state, as the ledger derives it from its reply's row. */
  chunkStates(): Map<string, string> {
    const rows = cachedStatement(this.db, `SELECT * FROM ${EVERY_ROW}`).all() as ObligationSql[];
    return new Map(rows.flatMap((row) => chunksOf(row).map((chunk) => [`${row.id}#${chunk.index}`, chunk.state] as const)));
  }

  apply(op: Op): void {
    this.step += 1;
    switch (op.kind) {
      case 'record': {
        const p = this.slots[op.slot];
        if (!p) return;
        const n = ++this.replies;
        const input = replyIn(CONVERSATIONS[op.conversation]!, n, 'irc', op.chunks);
        const { row } = p.ledger.recordObligation(input);
        const seq = (cachedStatement(this.db, 'SELECT row FROM ledger_outbox WHERE id = ?').get(row.id) as { row: number }).row;
        this.recorded.push({ id: row.id, conversation: input.sessionKey, seq, chunks: op.chunks });
        if (op.drain) this.apply({ kind: 'claimNext', slot: op.slot, conversation: op.conversation });
        return;
      }
      case 'claim': {
        const p = this.slots[op.slot];
        const row = this.recorded[op.row % Math.max(1, this.recorded.length)];
        if (!p || !row) return;
        this.claiming(p, () => {
          const result = p.ledger.markAttempting(row.id, this.platforms());
          return result.ok ? [result.claim] : [];
        });
        return;
      }
      case 'claimNext': {
        const p = this.slots[op.slot];
        if (!p) return;
        const key = replyIn(CONVERSATIONS[op.conversation]!, 0).sessionKey;
        this.claiming(p, () => {
          const next = p.ledger.claimNext(key, this.platforms());
          return next.kind === 'claimed' ? [next.claim] : [];
        });
        return;
      }
      case 'sweep': {
        const p = this.slots[op.slot];
        if (!p) return;
        this.claiming(p, () => [...p.ledger.sweepRecoverable({ now: this.clock.now(), deliverablePlatforms: this.platforms() }).claimed]);
        return;
      }
      case 'sendBegin': {
        const [p, sender] = this.pickSender(op.slot, op.claim);
        if (!p || !sender || sender.inFlight) return;
        const index = sender.remaining[0]!;
        const key = `${sender.claim.id}#${index}`;
        const sending = p.ledger.markChunkSending(sender.claim.receipt, index);
        if (!sending.ok) {
          // Discarded, or the claim went stale: the deliverer stops here.
          bump('stopped by a stale receipt');
          p.ledger.release(sender.claim.receipt);
          this.endSender(p, sender);
          return;
        }
        // The promise, at the moment a chunk is handed to the platform.
        expect(this.deliveredEver.has(key), `chunk ${key} was delivered and is sent again`).toBe(false);
        if (this.mayHaveArrived.has(key)) expect(sending.marker, `chunk ${key} may have arrived and is resent without the marker`).toBe(true);
        // A reply starts going out only once every earlier reply of its conversation is settled.
        if (!this.started.has(sender.claim.id)) this.checkOrder(sender.claim.id);
        this.started.add(sender.claim.id);
        if (op.outcome === 'ok' || op.outcome === 'timeout-arrived') {
          const arrivals = this.received.get(key) ?? [];
          if (arrivals.length > 0) expect(sending.marker, `chunk ${key} arrives a second time unmarked`).toBe(true);
          arrivals.push(sending.marker);
          this.received.set(key, arrivals);
        }
        if (op.outcome !== 'refused' && op.outcome !== 'permanent') this.mayHaveArrived.add(key);
        bump(sending.marker ? 'marked send' : 'plain send');
        if ((this.received.get(key)?.length ?? 0) > 1) bump('marked repeat');
        sender.inFlight = { index, outcome: op.outcome };
        return;
      }
      case 'sendFinish': {
        const [p, sender] = this.pickSender(op.slot, op.claim);
        if (!p || !sender || !sender.inFlight) return;
        const { index, outcome } = sender.inFlight;
        const { receipt } = sender.claim;
        sender.inFlight = null;
        switch (outcome) {
          case 'ok': {
            sender.remaining.shift();
            if (sender.remaining.length === 0) {
              p.ledger.markDelivered(receipt, { index, platformMessageId: `pm-${index}` });
              this.endSender(p, sender);
            } else {
              p.ledger.markChunkDelivered(receipt, index, `pm-${index}`);
            }
            return;
          }
          case 'refused':
          case 'permanent':
            p.ledger.markChunkUnsent(receipt, index);
            p.ledger.markFailed(receipt, { error: outcome === 'refused' ? 'not connected' : 'no such nick', retryable: outcome === 'refused', permanent: outcome === 'permanent' });
            this.endSender(p, sender);
            return;
          case 'timeout-arrived':
          case 'timeout-lost':
            p.ledger.markFailed(receipt, { error: 'timed out', retryable: true, permanent: false });
            this.endSender(p, sender);
            return;
        }
        return;
      }
      case 'stopSending': {
        const [p, sender] = this.pickSender(op.slot, op.claim);
        if (!p || !sender || sender.inFlight) return;
        // The gateway is stopping, or the platform went away before the next chunk.
        p.ledger.release(sender.claim.receipt);
        this.endSender(p, sender);
        return;
      }
      case 'crash': {
        const p = this.slots[op.slot];
        if (!p) return;
        if (op.clean) p.ledger.stop();
        this.machine.kill(p.pid);
        this.slots[op.slot] = null;
        return;
      }
      case 'start':
        this.start(op.slot);
        return;
      case 'heartbeat':
        this.slots[op.slot]?.ledger.heartbeat();
        return;
      case 'clock':
        this.clock.advance(op.ms);
        return;
      case 'discard': {
        const p = this.slots[op.slot];
        const row = this.recorded[op.row % Math.max(1, this.recorded.length)];
        if (p && row) p.ledger.discardDelivery(row.id);
        return;
      }
      case 'retry': {
        const p = this.slots[op.slot];
        const row = this.recorded[op.row % Math.max(1, this.recorded.length)];
        if (!p || !row) return;
        const held = this.slots.some((other) => other?.senders.some((sender) => sender.claim.id === row.id));
        const result = p.ledger.retryDelivery(row.id);
        if (result.ok) this.retriedAt.set(row.id, this.step);
        if (held) bump('retry refused to protect a sender');
        // Never a second sender: a retry while some live process still sends the row is refused.
        if (held) expect(result.ok, `retry of ${row.id} accepted while a live sender holds it`).toBe(false);
        return;
      }
      case 'platform':
        this.platformPresent = op.present;
        return;
    }
  }

  /** A live process that is sending something, and one of its senders (chosen by the op's numbers). */
  private pickSender(n: number, k: number): [Process, Sender] | [undefined, undefined] {
    const sending = this.slots.filter((p): p is Process => p !== null && p.senders.length > 0);
    const p = sending[n % Math.max(1, sending.length)];
    return p ? [p, p.senders[k % p.senders.length]!] : [undefined, undefined];
  }

  /** Runs a claiming call, checking that it took only rows no other live process owns. */
  private claiming(p: Process, call: () => ClaimedObligation[]): void {
    const before = new Map(this.rows().map((row) => [row.id, row]));
    const live = this.liveInstances();
    for (const claim of call()) {
      const was = before.get(claim.id)!;
      const otherLiveOwner = was.owner_instance !== null && was.owner_instance !== p.ledger.instanceId && live.has(was.owner_instance);
      expect(otherLiveOwner, `${p.ledger.instanceId} claimed ${claim.id} from live owner ${was.owner_instance}`).toBe(false);
      expect(claim.receipt.owner).toBe(p.ledger.instanceId);
      const remaining = claim.chunks.filter((chunk) => chunk.state !== 'delivered').map((chunk) => chunk.index);
      expect(remaining.length, `claimed ${claim.id} with nothing left to send`).toBeGreaterThan(0);
      if (was.owner_instance !== null && was.owner_instance !== p.ledger.instanceId) bump('taken over from a dead owner');
      this.checkOrder(claim.id);
      p.senders.push({ claim, remaining, inFlight: null, claimedAt: this.step });
    }
  }

  private endSender(p: Process, sender: Sender): void {
    p.senders.splice(p.senders.indexOf(sender), 1);
    p.ledger.letGo(sender.claim.id);
  }

  /**
   * Within a conversation, a reply is claimed, and starts going out, only once
   * every earlier one is settled. A Retry of an earlier one is refused while a
   * later one is being sent, so it cannot slip in under it.
   */
  private checkOrder(id: string): void {
    const rows = this.rows();
    const row = rows.find((r) => r.id === id)!;
    for (const earlier of rows) {
      if (earlier.session_key !== row.session_key || earlier.seq >= row.seq) continue;
      expect(isOwed(earlier), `reply ${row.seq} of ${row.session_key} sent while reply ${earlier.seq} is ${earlier.state}`).toBe(false);
    }
  }

  /** The invariants that hold between any two steps. */
  check(): void {
    const rows = new Map(this.rows().map((row) => [row.id, row]));
    // The owed count is the count of owed rows, after every step.
    const counted = [...rows.values()].filter((row) => isOwed(row)).length;
    for (const p of this.slots) if (p) expect(p.ledger.owedCount(), 'the owed count').toBe(counted);
    const chunks = this.chunkStates();
    for (const [key, state] of chunks) {
      if (state === 'delivered') this.deliveredEver.add(key);
      else expect(this.deliveredEver.has(key), `chunk ${key} was delivered and is now ${state}`).toBe(false);
    }
    for (const recorded of this.recorded) {
      const row = rows.get(recorded.id);
      if (!row) {
        expect(this.rowsDeliveredEver.has(recorded.id), `row ${recorded.id} vanished while not delivered`).toBe(true);
        continue;
      }
      if (row.state === 'delivered') this.rowsDeliveredEver.add(row.id);
      expect(row.attempts, `row ${row.id} has ${row.attempts} attempts`).toBeLessThanOrEqual(MAX_ATTEMPTS);
      if (row.state === 'abandoned') expect(row.abandon_reason, `row ${row.id} abandoned without a reason`).not.toBeNull();
      if (row.state === 'failed') expect(row.last_error, `row ${row.id} failed without an error`).not.toBeNull();
      if (row.state === 'delivered') {
        for (let i = 0; i < recorded.chunks; i++) {
          expect(chunks.get(`${row.id}#${i}`)).toBe('delivered');
          // Delivered means the platform has it (every chunk arrived at least once).
          expect(this.received.get(`${row.id}#${i}`)?.length ?? 0, `row ${row.id} delivered but chunk ${i} never arrived`).toBeGreaterThan(0);
        }
      }
    }
    // No row has two live senders.
    const senders = new Map<string, number>();
    for (const p of this.slots) for (const sender of p?.senders ?? []) senders.set(sender.claim.id, (senders.get(sender.claim.id) ?? 0) + 1);
    for (const [id, n] of senders) expect(n, `row ${id} has ${n} live senders`).toBe(1);
  }
}

function isOwed(row: RowSql): boolean {
  return row.state === 'pending' || row.state === 'attempting' || (row.state === 'failed' && row.next_attempt_at !== null);
}

/** Tables cleared between runs: one real file, so thousands of sequences stay quick. */
function clear(db: Db): void {
  db.exec('DELETE FROM ledger_outbox; DELETE FROM ledger_history; DELETE FROM ledger_instances; DELETE FROM ledger_meta;');
  // Rows changed on this connection behind the ledgers' backs: the kept owed count is counted again.
  OwedCount.of(db).changed();
}

let dir: string;
let db: Db;
beforeAll(() => {
  // tmpfs where there is one: the fsyncs of thousands of runs would dominate otherwise.
  dir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'homing-model-'));
  db = openTestDb(join(dir, 'homing.db'));
});
afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the ledger against a model of the platform, the processes and the clock', () => {
  it('keeps the delivery promise after every step of thousands of seeded operation sequences', () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 20, maxLength: 80, size: 'max' }), (ops) => {
        clear(db);
        const world = new World(db);
        world.check();
        for (const op of ops) {
          world.apply(op);
          world.check();
        }
        for (const row of world.rows()) bump(row.state);
      }),
      { seed: 20_260_101, numRuns: 2_000 },
    );
    for (const what of ['marked send', 'marked repeat', 'stopped by a stale receipt', 'taken over from a dead owner', 'retry refused to protect a sender', 'delivered', 'failed', 'abandoned']) {
      expect(coverage[what] ?? 0, `the runs exercised "${what}"`).toBeGreaterThan(0);
    }
  }, 300_000);
});
