import { REPLY_COLUMNS } from './rows';
import { OWED, OWED_ROWS } from './states';

/**
 * The delivery ledger's state machine, in one table: every change a reply or
 * the progress of its parts can go through, as (from, to, guard, effect), each
 * one UPDATE of its outbox row (a reply's parts are columns of it). The SQL of
 * each verb is built from its row here and nowhere else, so what the table says
 * is what the database does; so are the two writes that are not a change of
 * state: `record` (RECORD_SQL, the row's insert) and `move` (MOVE_SQL, a
 * delivered row into the history).
 *
 *   recorded ──► pending ──claim──► attempting ──deliver──► delivered
 *                  ▲   ▲               │ │ └──fail──► failed (retry at t) ──claim──► attempting
 *                  │   └────release────┘ │            failed (for good)    (settled)
 *                  │                     └──fail at the cap──► abandoned   (settled)
 *                  └──retry── failed | abandoned          discard: owed ──► abandoned
 *
 * Guards:
 *  - `receipt`: the writer presents the receipt its claim returned (owner +
 *    fence). Every claim and every retry bumps the fence, so a sender that lost
 *    its row (to a sweep after it was judged dead, to the user's Retry) writes
 *    nothing, whatever it still believes.
 *  - `read`: a compare-and-swap on the state, owner and fence the caller read
 *    just before: two sweepers can never both win the same row.
 *  - `none`: the user's own decisions (Discard), and facts replayed after the
 *    ledger failed mid-send (what was sent is true whoever owns the row now).
 *
 * Named parameters: @row (the reply's row), @now, @me (this instance),
 * @owner/@fence (a receipt), @readState/@readOwner/@readFence (a read), @index
 * (a part), and the effect's own.
 */
export type Guard = 'receipt' | 'read' | 'none';

export interface ObligationTransition {
  /** The states it may start from, as an SQL condition on the row. */
  readonly from: string;
  /** The state it leaves the row in (documentation; the effect sets it). */
  readonly to: string;
  readonly guard: Guard;
  /** SQL assignments. */
  readonly effect: string;
}

/**
 * The lowest owed row of the conversation @session: the head of its outbox.
 * The owed index is by (owner, conversation), so this is one seek per owner
 * that has owed rows (a handful: this process, a dead one being taken over,
 * nobody), the owners found by skipping through the index.
 */
export const HEAD_ROW = `(WITH RECURSIVE owners (owner) AS (
    SELECT (SELECT min(owner_instance) FROM ${OWED_ROWS} WHERE ${OWED})
    UNION ALL
    SELECT (SELECT min(owner_instance) FROM ${OWED_ROWS} WHERE ${OWED} AND owner_instance > owners.owner) FROM owners WHERE owners.owner IS NOT NULL
  )
  SELECT min(head) FROM (
    SELECT (SELECT min(row) FROM ${OWED_ROWS} WHERE ${OWED} AND owner_instance IS NULL AND session_key = @session) AS head
    UNION ALL
    SELECT (SELECT min(row) FROM ${OWED_ROWS} WHERE ${OWED} AND owner_instance = owners.owner AND session_key = @session)
    FROM owners WHERE owners.owner IS NOT NULL
  ))`;

/** The awake clock's current reading (see sweep.ts), as an SQL expression. */
export const AWAKE_NOW = `COALESCE((SELECT value FROM ledger_meta WHERE key = 'awake_ms'), 0)`;

/**
 * record: a reply, last in the outbox: its row number is the next one, which orders it
 * after every reply recorded before in its conversation. Not when its id is
 * known already, in the outbox (the unique index) or the history. Nothing
 * comes back (Ledger.insertReply builds the row from what it bound, and the
 * row number SQLite chose, the insert's rowid).
 */
export const RECORD_SQL = `INSERT INTO ledger_outbox
     (id, session_key, platform, chat_id, thread_id, reply_to, content, parts, state, owner_instance, fence, last_attempt_at,
      created_at, updated_at, chunk_count, part_sending, owed_since_awake, message_ref)
   SELECT @id, @sessionKey, @platform, @chatId, @threadId, @replyTo, @content, @parts, @state, @me, @fence, @lastAttemptAt,
          @now, @now, @chunks, @sending, ${AWAKE_NOW}, @messageRef
   WHERE NOT EXISTS (SELECT 1 FROM ledger_history WHERE id = @id)
   ON CONFLICT (id) DO NOTHING`;
/**
 * move: the delivered rows of the outbox up to row @upto into the history,
 * which numbers them itself, in their order; a row leaves the outbox only once
 * the history holds its id (sweep.ts moveDelivered runs both, in one
 * transaction). Both read the outbox whole — it holds what is in flight and
 * the few hundred replies delivered since the last move — rather than a list
 * of rows built for them.
 */
export const MOVE_SQL = {
  upto: `SELECT max(row) AS upto FROM (SELECT row FROM ledger_outbox WHERE state = 'delivered' ORDER BY row LIMIT @limit)`,
  copy: `INSERT OR IGNORE INTO ledger_history (${REPLY_COLUMNS})
         SELECT ${REPLY_COLUMNS} FROM ledger_outbox WHERE state = 'delivered' AND row <= @upto ORDER BY row`,
  remove: `DELETE FROM ledger_outbox WHERE state = 'delivered' AND row <= @upto
           AND EXISTS (SELECT 1 FROM ledger_history WHERE ledger_history.id = ledger_outbox.id)`,
} as const;

export const OBLIGATION_TRANSITIONS = {
  /** Takes a row to send it. Only the head of its outbox: replies of one conversation go out in order. */
  claim: {
    from: `${OWED} AND (state != 'failed' OR next_attempt_at <= @now) AND row = ${HEAD_ROW}`,
    to: 'attempting',
    guard: 'read',
    effect: `state = 'attempting', owner_instance = @me, fence = fence + 1, last_attempt_at = @now,
             next_attempt_at = NULL, updated_at = @now`,
  },
  /** Gives a claim back without a failed send (the platform went away before it; the user discarded it). */
  release: {
    from: `state IN ('attempting', 'abandoned')`,
    to: 'pending (abandoned stays abandoned)',
    guard: 'receipt',
    effect: `state = CASE state WHEN 'attempting' THEN 'pending' ELSE state END, owner_instance = NULL, updated_at = @now`,
  },
  /** Every chunk arrived. Also from abandoned: discarded while its last chunk was on its way, it still arrived. */
  deliver: {
    from: `state IN ('attempting', 'abandoned')`,
    to: 'delivered',
    guard: 'receipt',
    effect: `state = 'delivered', delivered_at = @now, updated_at = @now, next_attempt_at = NULL,
             chunks_delivered = chunk_count, part_sending = 0, part_maybe = 0, owner_instance = NULL`,
  },
  /**
   * A chunk handed to the platform failed: that is what spends an attempt. The
   * caller decides from the policy whether it is retried (failed, @next set),
   * failed for good (failed, @next NULL) or given up at the cap (abandoned).
   */
  fail: {
    from: `state = 'attempting'`,
    to: 'failed | abandoned',
    guard: 'receipt',
    effect: `state = @state, attempts = attempts + 1, next_attempt_at = @next, last_error = @error,
             abandon_reason = @reason, owner_instance = NULL, updated_at = @now`,
  },
  /** The sweep gives up on a row (stale cutoff, attempt cap). */
  abandon: {
    from: OWED,
    to: 'abandoned',
    guard: 'read',
    effect: `state = 'abandoned', abandon_reason = @reason, next_attempt_at = NULL, updated_at = @now`,
  },
  /** The sweep finds every chunk delivered (the sender died between its last chunk and this mark). */
  settle: {
    from: OWED,
    to: 'delivered',
    guard: 'read',
    effect: `state = 'delivered', delivered_at = @now, updated_at = @now, next_attempt_at = NULL, part_sending = 0, part_maybe = 0,
             owner_instance = NULL`,
  },
  /**
   * The user asks to try again: a fresh attempt budget and stale clock, owned by
   * nobody. The caller checks first that no live sender holds it; the read
   * guard makes that check and this write one atomic step.
   */
  retry: {
    from: `(state = 'abandoned' OR state = 'failed')`,
    to: 'pending',
    guard: 'read',
    effect: `state = 'pending', owner_instance = NULL, attempts = 0, fence = fence + 1, owed_since_awake = ${AWAKE_NOW},
             next_attempt_at = NULL, abandon_reason = NULL, updated_at = @now`,
  },
  /**
   * The user gives up on a row. The owner is kept: a sender in the middle of it
   * records the chunk it is sending, then finds the row no longer attempting
   * and stops (and releases it).
   */
  discard: {
    from: OWED,
    to: 'abandoned',
    guard: 'none',
    effect: `state = 'abandoned', abandon_reason = @reason, next_attempt_at = NULL, updated_at = @now`,
  },
  /** Replayed after the ledger failed: the reply was sent in full while its row could not be written. */
  deliveredAnyway: {
    from: `state != 'delivered'`,
    to: 'delivered',
    guard: 'none',
    effect: `state = 'delivered', delivered_at = @now, updated_at = @now, next_attempt_at = NULL,
             chunks_delivered = chunk_count, part_sending = 0, part_maybe = 0, owner_instance = NULL`,
  },
} as const satisfies Record<string, ObligationTransition>;

/**
 * The progress of a reply's parts. Parts go out in order, so the part in
 * question is always the next one, `chunks_delivered` (@index says which one the
 * writer means: a write about another part changes nothing).
 */
export interface ChunkTransition {
  readonly from: string;
  readonly to: string;
  /** `receipt`: the reply must be held with this receipt and be in one of `obligationIn`. */
  readonly guard: 'receipt' | 'none';
  readonly obligationIn?: string;
  readonly effect: string;
}

export const CHUNK_TRANSITIONS = {
  /**
   * Written just before the part is handed to a platform that cannot
   * deduplicate. A part found still on its way had a send whose outcome nobody
   * saw: from then on it may have arrived, for good (sticky), so this send and
   * every later one carries the marker. The reply must still be attempting: a
   * discarded reply stops here.
   */
  send: {
    from: `chunks_delivered = @index`,
    to: 'sending',
    guard: 'receipt',
    obligationIn: `('attempting')`,
    effect: `part_maybe = CASE WHEN part_sending = 1 THEN 1 ELSE part_maybe END, part_sending = 1, updated_at = @now`,
  },
  /** The platform refused the part outright: this send did not arrive. An earlier one still may have (sticky). */
  unsent: {
    from: `chunks_delivered = @index AND part_sending = 1`,
    to: 'owed',
    guard: 'receipt',
    obligationIn: `('attempting', 'abandoned')`,
    effect: `part_sending = 0, updated_at = @now`,
  },
  /** The platform confirmed the part: never sent again. */
  deliver: {
    from: `chunks_delivered = @index AND chunks_delivered < chunk_count`,
    to: 'delivered',
    guard: 'receipt',
    obligationIn: `('attempting', 'abandoned')`,
    effect: `chunks_delivered = chunks_delivered + 1, part_sending = 0, part_maybe = 0, updated_at = @now`,
  },
  /** Replayed after the ledger failed: a send of it began. */
  sendingAnyway: {
    from: `chunks_delivered = @index AND state != 'delivered'`,
    to: 'sending',
    guard: 'none',
    effect: `part_maybe = 1, part_sending = 1, updated_at = @now`,
  },
  /** Replayed after the ledger failed: it was confirmed. */
  deliveredAnyway: {
    from: `chunks_delivered = @index AND chunks_delivered < chunk_count AND state != 'delivered'`,
    to: 'delivered',
    guard: 'none',
    effect: `chunks_delivered = chunks_delivered + 1, part_sending = 0, part_maybe = 0, updated_at = @now`,
  },
} as const satisfies Record<string, ChunkTransition>;

export type ObligationVerb = keyof typeof OBLIGATION_TRANSITIONS;
export type ChunkVerb = keyof typeof CHUNK_TRANSITIONS;

const GUARDS: Record<Guard, string> = {
  receipt: 'owner_instance = @owner AND fence = @fence',
  read: 'state = @readState AND owner_instance IS @readOwner AND fence = @readFence',
  none: '1',
};

export const obligationSql = builtOnce((verb: ObligationVerb): string => {
  const t: ObligationTransition = OBLIGATION_TRANSITIONS[verb];
  return `UPDATE ledger_outbox SET ${t.effect} WHERE row = @row AND (${t.from}) AND ${GUARDS[t.guard]}`;
});

export const chunkSql = builtOnce((verb: ChunkVerb): string => {
  const t: ChunkTransition = CHUNK_TRANSITIONS[verb];
  const held = t.guard === 'receipt' ? ` AND ${GUARDS.receipt} AND state IN ${t.obligationIn ?? "('attempting')"}` : '';
  return `UPDATE ledger_outbox SET ${t.effect} WHERE row = @row AND (${t.from})${held} RETURNING part_maybe`;
});

/** `build`, remembered per verb: the send path asks for the same few SQL texts for every chunk. */
function builtOnce<V extends string>(build: (verb: V) => string): (verb: V) => string {
  const built = new Map<V, string>();
  return (verb) => {
    let sql = built.get(verb);
    if (sql === undefined) built.set(verb, (sql = build(verb)));
    return sql;
  };
}
