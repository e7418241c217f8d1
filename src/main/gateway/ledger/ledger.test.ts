import { afterEach, describe, expect, it } from 'vitest';
import type { DeliveryRow } from '../../../shared/api';
import { claim, EVERY_ROW, IRC, MATRIX, ManualClock, openTestDb, preparedPlans, removeTempDirs, reply, replyIn, sendAll, testLedger } from './fixtures/test-ledger';
import { MAX_ERROR_CHARS } from './ledger';
import { loadObligation } from './rows';
import { moveDelivered } from './sweep';

afterEach(removeTempDirs);

function setup() {
  const db = openTestDb();
  const clock = new ManualClock();
  const events: DeliveryRow[] = [];
  const ledger = testLedger(db, clock, { onChange: (row) => events.push(row) });
  return { db, clock, ledger, events };
}

const RETRYABLE = { error: 'timeout', retryable: true, permanent: false } as const;

describe('chunk texts', () => {
  it('stores a reply\'s text once — its parts as slices of it, a part the split changed as its own text — and reads them back whole', () => {
    const { db, ledger } = setup();
    const one = reply(1);
    const two = reply(2, 'irc', 2);
    const formatted = { ...reply(3), chunks: ['formatted for the platform'] };
    for (const input of [one, two, formatted]) ledger.recordObligation(input);
    const stored = (id: string) => (db.prepare('SELECT parts FROM ledger_outbox WHERE id = ?').get(id) as { parts: string | null }).parts;
    expect(stored(one.obligationId)).toBeNull();
    expect(JSON.parse(stored(two.obligationId)!)).toEqual([
      [0, 14],
      [15, 29],
    ]);
    expect(JSON.parse(stored(formatted.obligationId)!)).toEqual(['formatted for the platform']);
    expect(ledger.chunks(one.obligationId).map((chunk) => chunk.text)).toEqual([one.content]);
    expect(ledger.chunks(two.obligationId).map((chunk) => chunk.text)).toEqual(two.chunks);
    expect(ledger.chunks(formatted.obligationId).map((chunk) => chunk.text)).toEqual(['formatted for the platform']);
    // A claim (what a send reads) carries the text too.
    const claimed = ledger.markAttempting(one.obligationId, [IRC]);
    expect(claimed.ok && claimed.claim.chunks.map((chunk) => chunk.text)).toEqual([one.content]);
  });
});

describe('moving delivered replies to the history', () => {
  it('moves the oldest `limit` delivered replies, in their order and whole, and leaves every other reply in the outbox', () => {
    const { db, ledger } = setup();
    const inputs = [1, 2, 3, 4, 5, 6].map((n) => replyIn(`chat-${n}`, n));
    for (const input of inputs) ledger.recordObligation(input);
    // Delivered: 1, 2, 4 and 5; 3 stays owed, 6 fails for good.
    for (const n of [1, 2, 4, 5]) sendAll(ledger, claim(ledger, inputs[n - 1]!.obligationId));
    const six = claim(ledger, inputs[5]!.obligationId);
    ledger.markFailed(six.receipt, { error: 'chat not found', retryable: false, permanent: true });
    const before = inputs.map((input) => loadObligation(db, input.obligationId)!);
    const inTable = (table: string) => (db.prepare(`SELECT id FROM ${table} ORDER BY row`).all() as { id: string }[]).map((row) => row.id);
    const ids = (...ns: number[]) => ns.map((n) => inputs[n - 1]!.obligationId);

    expect(db.transaction(() => moveDelivered(db, 3))()).toBe(3);
    expect(inTable('ledger_history')).toEqual(ids(1, 2, 4));
    expect(inTable('ledger_outbox')).toEqual(ids(3, 5, 6));
    expect(db.transaction(() => moveDelivered(db, 3))()).toBe(1);
    expect(db.transaction(() => moveDelivered(db, 3))()).toBe(0);
    expect(inTable('ledger_history')).toEqual(ids(1, 2, 4, 5));
    expect(inTable('ledger_outbox')).toEqual(ids(3, 6));
    // Every column but the row number (the history numbers its own) as it was in the outbox.
    for (const n of [1, 2, 4, 5]) {
      const { row: _outboxRow, ...moved } = before[n - 1]!;
      const { row: _historyRow, ...found } = loadObligation(db, inputs[n - 1]!.obligationId)!;
      expect(found).toEqual(moved);
    }
  });
});

describe('recording a reply already claimed (one commit before the send)', () => {
  it('records the head of a conversation attempting, owned here, its first chunk on its way, and held', () => {
    const { ledger, events } = setup();
    const input = reply(1, 'irc', 2);
    const recorded = ledger.recordClaimed(input, IRC);
    expect(recorded.created).toBe(true);
    expect(recorded.row).toMatchObject({ state: 'attempting', attempts: 0, chunksTotal: 2 });
    expect(recorded.claim).toMatchObject({ id: input.obligationId, seq: 1, receipt: { owner: ledger.instanceId, fence: 1 }, sendingMarked: { index: 0, marker: false } });
    // On its way by this claim, not after a send nobody saw: nothing of it may have arrived yet.
    expect(recorded.claim).toMatchObject({ mayHaveArrived: false, needsMarker: false, firstChunk: { index: 0, mayHaveArrived: false } });
    expect(ledger.chunks(input.obligationId).map((chunk) => chunk.state)).toEqual(['sending', 'owed']);
    expect(ledger.isHeld(input.obligationId)).toBe(true);
    expect(events.map((row) => row.state)).toEqual(['attempting']);
    // The receipt works like any claim's.
    expect(ledger.markChunkDelivered(recorded.claim!.receipt, 0, 'pm-1')).toEqual({ ok: true });
    expect(ledger.markChunkSending(recorded.claim!.receipt, 1)).toEqual({ ok: true, marker: false });
    expect(ledger.markDelivered(recorded.claim!.receipt, { index: 1, platformMessageId: 'pm-2' })).toEqual({ ok: true });
    expect(ledger.getDelivery(input.obligationId)).toMatchObject({ state: 'delivered', chunksDelivered: 2 });
  });

  it('leaves a reply pending behind an earlier owed one, when its platform cannot send, and when it was recorded before', () => {
    const { ledger } = setup();
    ledger.recordObligation(replyIn('chat', 1));
    const behind = ledger.recordClaimed(replyIn('chat', 2), IRC);
    expect(behind).toMatchObject({ created: true, row: { state: 'pending' } });
    expect(behind.claim).toBeUndefined();

    const away = ledger.recordClaimed(reply(3), { ...IRC, canSend: () => false });
    expect(away.row.state).toBe('pending');
    expect(away.claim).toBeUndefined();

    const first = ledger.recordClaimed(reply(4), IRC);
    sendAll(ledger, first.claim!);
    const again = ledger.recordClaimed(reply(4), IRC);
    expect(again).toMatchObject({ created: false, row: { state: 'delivered' } });
    expect(again.claim).toBeUndefined();
  });

  it('marks no chunk on its way for a platform that deduplicates resends', () => {
    const { ledger } = setup();
    const recorded = ledger.recordClaimed(reply(1, 'matrix'), MATRIX);
    expect(recorded.claim?.sendingMarked).toBeUndefined();
    expect(ledger.chunks(reply(1, 'matrix').obligationId)[0]!.state).toBe('owed');
  });

  it('describes a new row (its event, its result, its claim) as the database holds it, though it does not read it back', () => {
    const { db, clock, ledger, events } = setup();
    db.prepare(`INSERT INTO ledger_meta (key, value) VALUES ('awake_ms', 4321) ON CONFLICT (key) DO UPDATE SET value = excluded.value`).run();
    ledger.recordObligation(replyIn('chat', 1));
    clock.advance(5);
    const pending = ledger.recordObligation({ ...replyIn('chat', 2, 'irc', 2), threadId: 'thread-1', replyTo: 'their-7', messageRef: 'msg-2' });
    const claimed = ledger.recordClaimed({ ...reply(3), messageRef: null }, IRC);
    for (const recorded of [pending, claimed]) {
      const id = recorded.row.id;
      expect(recorded.row).toEqual(ledger.getDelivery(id));
      expect(events.filter((row) => row.id === id)).toEqual([ledger.getDelivery(id)]);
    }
    const stored = loadObligation(db, claimed.row.id)!;
    // Rows are numbered in recording order across conversations: the third reply recorded.
    expect(stored).toMatchObject({ row: 3, fence: 1, owner_instance: ledger.instanceId, owed_since_awake: 4321 });
    expect(claimed.claim).toMatchObject({
      receipt: { id: stored.id, row: stored.row, owner: stored.owner_instance, fence: stored.fence },
      seq: stored.row,
      recordedAt: stored.created_at,
      sessionKey: stored.session_key,
      target: { platform: stored.platform, chatId: stored.chat_id, threadId: stored.thread_id, replyTo: stored.reply_to },
      content: stored.content,
      attempts: stored.attempts,
    });
    expect(loadObligation(db, pending.row.id)).toMatchObject({ row: 2, fence: 0, thread_id: 'thread-1', reply_to: 'their-7', message_ref: 'msg-2' });
  });

  it('tells of changes only while somebody listens, and then of each as it is', () => {
    const db = openTestDb();
    const events: DeliveryRow[] = [];
    let listening = false;
    const ledger = testLedger(db, new ManualClock(), { onChange: (row) => events.push(row), listening: () => listening });
    const first = ledger.recordClaimed(reply(1), IRC);
    sendAll(ledger, first.claim!);
    expect(events).toEqual([]);
    listening = true;
    const second = ledger.recordClaimed(reply(2), IRC);
    sendAll(ledger, second.claim!);
    expect(events.map((row) => [row.id, row.state])).toEqual([
      [second.row.id, 'attempting'],
      [second.row.id, 'delivered'],
    ]);
    expect(events.at(-1)).toEqual(ledger.getDelivery(second.row.id));
  });
});

describe('the delivery state machine', () => {
  it('goes pending → attempting → delivered, counting chunks, with an event at every change; a claim spends no attempt', () => {
    const { ledger, clock, events } = setup();
    const input = reply(1, 'irc', 2);
    const recorded = ledger.recordObligation(input);
    expect(recorded.created).toBe(true);
    expect(recorded.row).toMatchObject({ id: input.obligationId, state: 'pending', attempts: 0, chunksTotal: 2, chunksDelivered: 0 });

    clock.advance(10);
    const claimed = ledger.markAttempting(input.obligationId, [IRC]);
    expect(claimed).toMatchObject({ ok: true, claim: { id: input.obligationId, attempts: 0, seq: 1, receipt: { id: input.obligationId, owner: ledger.instanceId } } });
    const { receipt } = claimed.ok ? claimed.claim : expect.unreachable();
    expect(ledger.markChunkSending(receipt, 0)).toEqual({ ok: true, marker: false });
    expect(ledger.chunks(input.obligationId).map((chunk) => chunk.state)).toEqual(['sending', 'owed']);
    expect(ledger.markChunkDelivered(receipt, 0, 'pm-1')).toEqual({ ok: true });
    // A delivered chunk is never written again.
    expect(ledger.markChunkDelivered(receipt, 0, 'pm-1')).toEqual({ ok: false, reason: 'stale' });
    expect(ledger.markChunkSending(receipt, 0)).toEqual({ ok: false, reason: 'stale' });
    expect(ledger.markDelivered(receipt, { index: 1, platformMessageId: 'pm-2' })).toEqual({ ok: true });

    const row = ledger.getDelivery(input.obligationId)!;
    expect(row).toMatchObject({ state: 'delivered', attempts: 0, chunksDelivered: 2, chunksTotal: 2, lastError: null });
    expect(row.updatedAt).toBe(clock.now());
    expect(row.createdAt).toBe(clock.now() - 10);
    expect(events.map((event) => `${event.state}:${event.chunksDelivered}`)).toEqual(['pending:0', 'attempting:0', 'attempting:1', 'delivered:2']);
    expect(ledger.chunks(input.obligationId).map((chunk) => chunk.state)).toEqual(['delivered', 'delivered']);
    // Delivered: the receipt is spent.
    expect(ledger.markDelivered(receipt)).toEqual({ ok: false, reason: 'stale' });
  });

  it('re-recording the same turn and content changes nothing and never resets a delivered row', () => {
    const { ledger, db } = setup();
    const input = reply(2);
    sendAll(ledger, claim(ledger, ledger.recordObligation(input).row.id));

    const again = ledger.recordObligation({ ...input, chunks: ['different', 'split'] });
    expect(again.created).toBe(false);
    expect(again.row.state).toBe('delivered');
    expect(db.prepare(`SELECT count(*) AS n FROM ${EVERY_ROW}`).get()).toEqual({ n: 1 });
    expect(ledger.chunks(input.obligationId)).toHaveLength(1);
    expect(ledger.markAttempting(input.obligationId)).toEqual({ ok: false, reason: 'not-owed', state: 'delivered' });
  });

  it('numbers replies in recording order (every conversation\'s order) and remembers which message each answers', () => {
    const { ledger, db } = setup();
    const ids = [replyIn('alice', 1), replyIn('bob', 2), replyIn('alice', 3)].map((input) => ledger.recordObligation(input).row.id);
    const rows = db.prepare('SELECT id, row, message_ref AS ref, owner_instance AS owner FROM ledger_outbox ORDER BY row').all();
    expect(rows).toEqual([
      { id: ids[0], row: 1, ref: 'msg-1', owner: ledger.instanceId },
      { id: ids[1], row: 2, ref: 'msg-2', owner: ledger.instanceId },
      { id: ids[2], row: 3, ref: 'msg-3', owner: ledger.instanceId },
    ]);
    expect(ledger.replyFor(replyIn('alice', 3).sessionKey, 'msg-3')).toMatchObject({ id: ids[2] });
  });

  it('a row another live instance owns cannot be claimed here; an unknown id is not found', () => {
    const { db, clock, ledger } = setup();
    const other = testLedger(db, clock);
    const input = reply(3);
    other.recordObligation(input);
    expect(ledger.markAttempting(input.obligationId)).toEqual({ ok: false, reason: 'owned-elsewhere', state: 'pending' });
    expect(ledger.markAttempting('000000000000000000000000')).toEqual({ ok: false, reason: 'not-found' });
  });

  it('a row this ledger holds is not claimed again here until it lets go', () => {
    const { ledger } = setup();
    const id = ledger.recordObligation(reply(4)).row.id;
    const held = claim(ledger, id);
    expect(ledger.markAttempting(id)).toEqual({ ok: false, reason: 'held', state: 'attempting' });
    expect(ledger.sweepRecoverable({ now: 0, deliverablePlatforms: [IRC] }).claimed).toEqual([]);
    expect(ledger.release(held.receipt)).toEqual({ ok: true });
    expect(ledger.markAttempting(id)).toMatchObject({ ok: false, reason: 'held' });
    ledger.letGo(id);
    expect(ledger.markAttempting(id)).toMatchObject({ ok: true, claim: { attempts: 0 } });
  });

  it('a retryable failure spends one attempt and schedules the next with backoff; a permanent one is never retried', () => {
    const { ledger, clock } = setup();
    const retryable = ledger.recordObligation(reply(4)).row.id;
    const first = claim(ledger, retryable);
    expect(ledger.markFailed(first.receipt, RETRYABLE)).toEqual({ ok: true, state: 'failed', nextAttemptAt: clock.now() + ledger.policy.backoffBaseMs });
    expect(ledger.getDelivery(retryable)).toMatchObject({ state: 'failed', lastError: 'timeout', attempts: 1 });
    // The receipt is spent: a second failure report changes nothing.
    expect(ledger.markFailed(first.receipt, RETRYABLE)).toEqual({ ok: false, reason: 'stale' });
    ledger.letGo(retryable);
    expect(ledger.markAttempting(retryable)).toMatchObject({ ok: false, reason: 'not-due' });

    const permanent = ledger.recordObligation(reply(5)).row.id;
    const held = claim(ledger, permanent);
    expect(ledger.markFailed(held.receipt, { error: 'bot was blocked', retryable: false, permanent: true })).toEqual({
      ok: true,
      state: 'failed',
      nextAttemptAt: null,
    });
    ledger.letGo(permanent);
    expect(ledger.getDelivery(permanent)).toMatchObject({ lastError: 'permanent: bot was blocked', nextAttemptAt: null, attempts: 1 });
    expect(ledger.markAttempting(permanent)).toMatchObject({ ok: false, reason: 'not-owed' });
  });

  it('the failed send that reaches the cap abandons the row with a reason', () => {
    const { ledger, clock } = setup();
    const id = ledger.recordObligation(reply(6)).row.id;
    const results = [];
    for (let attempt = 1; attempt <= 5; attempt++) {
      const held = claim(ledger, id);
      expect(held.attempts).toBe(attempt - 1);
      results.push(ledger.markFailed(held.receipt, { error: `e${attempt}`, retryable: true, permanent: false }));
      ledger.letGo(id);
      clock.advance(3_600_000);
    }
    expect(results.map((result) => result.ok && result.state)).toEqual(['failed', 'failed', 'failed', 'failed', 'abandoned']);
    expect(ledger.getDelivery(id)).toMatchObject({ state: 'abandoned', abandonReason: 'gave up after 5 failed attempts', attempts: 5 });
  });

  it('the platform refusing a chunk outright puts it back to owed (this send did not arrive)', () => {
    const { ledger } = setup();
    const held = claim(ledger, ledger.recordObligation(reply(7)).row.id);
    ledger.markChunkSending(held.receipt, 0);
    expect(ledger.markChunkUnsent(held.receipt, 0)).toEqual({ ok: true });
    expect(ledger.chunks(held.id)[0]).toMatchObject({ state: 'owed', mayHaveArrived: false });
    expect(ledger.markChunkUnsent(held.receipt, 0)).toEqual({ ok: false, reason: 'stale' });
    expect(ledger.markChunkUnsent(held.receipt, 9)).toEqual({ ok: false, reason: 'stale' });
  });

  it('release gives a claim back without spending an attempt', () => {
    const { ledger } = setup();
    const held = claim(ledger, ledger.recordObligation(reply(8)).row.id);
    expect(ledger.release(held.receipt)).toEqual({ ok: true });
    expect(ledger.getDelivery(held.id)).toMatchObject({ state: 'pending', attempts: 0 });
    expect(ledger.release(held.receipt)).toEqual({ ok: false, reason: 'stale' });
  });

  it('retry makes a failed or abandoned row owed again with a fresh budget and a new fence; discard abandons an owed row', () => {
    const { ledger, db } = setup();
    const id = ledger.recordObligation(reply(8)).row.id;
    const held = claim(ledger, id);
    expect(ledger.retryDelivery(id)).toMatchObject({ ok: false, reason: 'conflict' });
    ledger.markFailed(held.receipt, { error: 'chat gone', retryable: false, permanent: true });
    ledger.letGo(id);
    const fence = (db.prepare('SELECT fence FROM ledger_outbox WHERE id = ?').get(id) as { fence: number }).fence;
    expect(ledger.retryDelivery(id)).toMatchObject({ ok: true, row: { state: 'pending', attempts: 0, nextAttemptAt: null } });
    expect(db.prepare('SELECT fence, owner_instance AS owner FROM ledger_outbox WHERE id = ?').get(id)).toEqual({ fence: fence + 1, owner: null });

    expect(ledger.discardDelivery(id)).toMatchObject({ ok: true, row: { state: 'abandoned', abandonReason: 'discarded by the user' } });
    expect(ledger.discardDelivery(id)).toMatchObject({ ok: true, row: { state: 'abandoned' } });
    expect(ledger.retryDelivery('0'.repeat(24))).toMatchObject({ ok: false, reason: 'not-found' });
    expect(ledger.retryDelivery(ledger.recordObligation(reply(10)).row.id)).toMatchObject({ ok: false, reason: 'conflict', message: expect.stringMatching(/is pending/) });

    const delivered = ledger.recordObligation(reply(9)).row.id;
    sendAll(ledger, claim(ledger, delivered));
    expect(ledger.discardDelivery(delivered)).toMatchObject({ ok: false, reason: 'conflict', message: expect.stringMatching(/already delivered/) });
  });

  it('keeps at most 500 code points of an error, cut on a code-point boundary', () => {
    const { ledger } = setup();
    const id = ledger.recordObligation(reply(11)).row.id;
    // 2 UTF-16 units per emoji: a cut by UTF-16 length would split one in half.
    const error = `${'x'.repeat(MAX_ERROR_CHARS - 2)}${'🙂'.repeat(2000)}`;
    ledger.markFailed(claim(ledger, id).receipt, { error, retryable: true, permanent: false });
    const stored = ledger.getDelivery(id)!.lastError!;
    const points = [...stored];
    expect(points.length).toBeLessThanOrEqual(MAX_ERROR_CHARS);
    expect(points.length).toBeGreaterThan(MAX_ERROR_CHARS - 2);
    expect(stored).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
    expect(stored.startsWith('x'.repeat(MAX_ERROR_CHARS - 2))).toBe(true);
    expect(ledger.listDeliveries().deliveries[0]!.lastError).toBe(stored);
  });

  it('lists newest first, by state, in pages of 50', () => {
    const { ledger, clock } = setup();
    for (let n = 0; n < 60; n++) {
      clock.advance(1);
      ledger.recordObligation(reply(100 + n));
    }
    sendAll(ledger, claim(ledger, reply(100).obligationId));
    const first = ledger.listDeliveries();
    expect(first.deliveries).toHaveLength(50);
    expect(first.hasMore).toBe(true);
    expect(first.deliveries[0]!.id).toBe(reply(159).obligationId);
    expect(ledger.listDeliveries({ cursor: first.nextCursor! })).toMatchObject({ page: 2, hasMore: false, nextCursor: null, deliveries: { length: 10 } });
    expect(ledger.listDeliveries({ state: 'delivered' }).deliveries.map((row) => row.id)).toEqual([reply(100).obligationId]);
    expect(Object.keys(first.deliveries[0]!)).toEqual(
      expect.arrayContaining(['id', 'state', 'platform', 'chatId', 'threadId', 'sessionKey', 'attempts', 'chunksDelivered', 'chunksTotal', 'lastError', 'createdAt', 'updatedAt']),
    );
  });
});

describe('stateCounts', () => {
  it('counts owed, retried, permanently failed, abandoned, discarded and recently delivered rows apart', () => {
    const { ledger, clock } = setup();
    const ids = Array.from({ length: 7 }, (_, i) => ledger.recordObligation(reply(100 + i)).row.id);
    const [pending, attempting, retried, permanent, abandoned, discarded, delivered] = ids as [string, string, string, string, string, string, string];
    void pending;
    claim(ledger, attempting);
    ledger.markFailed(claim(ledger, retried).receipt, RETRYABLE);
    ledger.markFailed(claim(ledger, permanent).receipt, { error: 'bot was blocked by the user', retryable: false, permanent: true });
    for (let attempt = 0; attempt < 5; attempt++) {
      ledger.markFailed(claim(ledger, abandoned).receipt, { error: 'down', retryable: true, permanent: false });
      ledger.letGo(abandoned);
      clock.advance(3_600_000);
    }
    ledger.discardDelivery(discarded);
    sendAll(ledger, claim(ledger, delivered));
    const counts = ledger.stateCounts(clock.now());
    expect(counts).toEqual({
      pending: 1,
      attempting: 1,
      failed: 1,
      failedPermanently: 1,
      abandoned: 1,
      discarded: 1,
      deliveredLastDay: 1,
    });
    expect(ledger.stateCounts(clock.now() + 2 * 86_400_000).deliveredLastDay).toBe(0);
    // Owed: pending, attempting, and failed with a retry scheduled.
    expect(ledger.owedCount()).toBe(3);
  });

  it('reads the outbox and the history\'s last day only: a seek on its index, never a scan of the delivered history', () => {
    const { ledger, db } = setup();
    const plans = preparedPlans(db, () => ledger.stateCounts(0));
    expect(plans).toHaveLength(2);
    for (const { sql, plan } of plans) expect(plan, sql).not.toMatch(/^SCAN ledger_history/m);
    expect(plans.map(({ plan }) => plan).join('\n')).toMatch(/SEARCH ledger_history USING COVERING INDEX ledger_history_delivered/);
  });

  it('counts a reply as delivered in the last day by when it arrived, not when it was recorded', () => {
    const { ledger, clock } = setup();
    const late = ledger.recordObligation(reply(200)).row.id;
    clock.advance(2 * 86_400_000); // owed for two days (the platform was down)
    sendAll(ledger, claim(ledger, late));
    expect(ledger.stateCounts(clock.now()).deliveredLastDay).toBe(1);
  });
});
