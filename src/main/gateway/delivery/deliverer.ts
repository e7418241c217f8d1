import type { LedgerHealth } from '../../../shared/api';
import type { Clock } from '../clock';
import type { CommitGroup } from '../db/commit-group';
import type { Ledger } from '../ledger/ledger';
import { computeChunkKey, computeObligationId } from '../ledger/obligation-id';
import type { Chunk, ClaimedObligation, DeliverablePlatform, NextInLane, RecordInput, RecordResult, SendFact } from '../ledger';
import type { Logger } from '../logger';
import { LedgerHealthMonitor } from './ledger-health';
import { withResendMarker } from './marker';
import type { UnrecordedJournal } from './unrecorded-journal';
import { dedupCovers, tracksArrival, type PlatformSender, type SendResult, type SendTarget } from './sender';

/** A final reply the pipeline hands over: what to say, where, in answer to what. */
export interface NewReply {
  readonly sessionKey: string;
  /** The platform's reference of the message this reply answers (part of the id). */
  readonly messageRef: string;
  readonly chatId: string;
  readonly threadId: string | null;
  readonly replyTo: string | null;
  readonly content: string;
  /** Its parts, when the caller split it; absent, the outbox splits it to its platform's limits (reply-parts.ts). */
  readonly chunks?: readonly string[] | undefined;
}

/** A reply split into the parts it is sent as, leaving RESEND_MARKER_RESERVE room in each. */
export interface SplitReply extends NewReply {
  readonly chunks: readonly string[];
}

export type DeliveryOutcome =
  | { readonly status: 'delivered'; readonly id: string; readonly chunksSent: number; readonly recorded: boolean }
  | {
      readonly status: 'failed';
      readonly id: string;
      readonly chunksSent: number;
      readonly recorded: boolean;
      readonly error: string;
      readonly retryable: boolean;
      readonly permanent: boolean;
    }
  /** The sender stopped before the end: the row was discarded or claimed again, or the gateway is stopping. */
  | { readonly status: 'stopped'; readonly id: string; readonly chunksSent: number; readonly recorded: boolean }
  /**
   * Recorded, but the "on its way" mark of its next part could not be written:
   * nothing more of it is sent until the ledger takes the mark (a part sent
   * unmarked could be repeated plainly after a crash). It stays owed.
   */
  | { readonly status: 'waiting-for-ledger'; readonly id: string; readonly chunksSent: number; readonly recorded: true }
  /** Nothing sent: already delivered, not owed, or another live sender has it. */
  | { readonly status: 'skipped'; readonly id: string; readonly reason: string };

export interface DelivererOptions {
  readonly ledger: Ledger;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Called on each ledger failure (the gateway emits `ledger.health`). */
  readonly onLedgerFailure?: (health: LedgerHealth) => void;
  /**
   * Group commit (db/commit-group.ts): with it, the writes after a send (chunk
   * and reply delivered, failed, released) join the next group commit instead
   * of committing one by one, and a chunk's "on its way" mark is fsynced in the
   * group of its turn. Without it every write commits on its own.
   */
  readonly group?: CommitGroup;
  /** Where a reply sent while the ledger could not record it is written for the next start (unrecorded-journal.ts). */
  readonly journal?: UnrecordedJournal;
}

/** A reply as recordReply left it: `result` is undefined when the ledger failed. */
export interface RecordedReply {
  readonly id: string;
  readonly platform: string;
  readonly reply: SplitReply;
  readonly result: RecordResult | undefined;
  /** Claimed in the commit that recorded it (recordClaimed): send it now, first chunk already marked. */
  readonly claim?: ClaimedObligation | undefined;
  /**
   * Settles once the commit that recorded it is on the disk (recordClaimed with
   * a group): nothing of it is sent before (DeliveryService.sendRecorded waits).
   * Rejects if the log could not be synced.
   */
  readonly onDisk?: Promise<void> | undefined;
}

/**
 * Sends replies chunk by chunk from the first chunk not known delivered, and
 * records each step with the claim's receipt.
 *
 * Best effort: when the ledger fails (busy, disk full), the reply is still
 * sent — a reply is never lost because its bookkeeping failed — and what was
 * sent is remembered as facts in memory. They are written back before this
 * process claims anything again (`flushFacts`), and the row stays held here
 * until they are, so no sweep of ours can resend a chunk plain that already
 * went out. Nothing here throws into the caller.
 */
export class Deliverer {
  private readonly monitor: LedgerHealthMonitor;
  private readonly ledger: Ledger;
  private readonly group: CommitGroup | undefined;
  private readonly clock: Clock;
  private readonly facts: SendFact[] = [];
  /** Rows whose send loop has ended but whose facts are not written yet. */
  private readonly finishedWithFacts = new Set<string>();
  /** Replies recorded in a commit that is not on the disk yet: none of them is sent before it is. */
  private readonly recording = new Map<string, Promise<void>>();
  private readonly journal: UnrecordedJournal | undefined;
  /** Unrecorded sends running now: the journal is written into the ledger only when none is. */
  private unrecordedSending = 0;

  constructor(options: DelivererOptions) {
    this.ledger = options.ledger;
    this.group = options.group;
    this.clock = options.clock;
    this.journal = options.journal;
    this.monitor = new LedgerHealthMonitor(options.clock, options.logger, options.onLedgerFailure);
  }

  ledgerHealth(): LedgerHealth {
    return this.monitor.health();
  }

  /** Runs one ledger call under the health monitor: undefined when the ledger failed. */
  guard<T>(operation: string, id: string, call: () => T): T | undefined {
    return this.monitor.guard(operation, id, call);
  }

  /** Facts not yet written back. */
  get unwrittenFacts(): number {
    return this.facts.length;
  }

  /**
   * Records a reply durably (owed, pending, last in its conversation's outbox)
   * before anything is sent. `result` is undefined when the ledger failed
   * (logged and counted); the caller then sends it unrecorded.
   */
  recordReply(platform: string, reply: SplitReply): RecordedReply {
    const input = recordInput(platform, reply);
    const result = this.monitor.guard('recordObligation', input.obligationId, () => this.ledger.recordObligation(input));
    return { id: input.obligationId, platform, reply, result };
  }

  /**
   * Records a reply in the next group commit and, when `deliverable` can take
   * it now and nothing earlier of its conversation is owed, claims it in the
   * same commit (Ledger.recordClaimed): one fsync before the send, shared by
   * every conversation recording in that turn of the event loop. Resolves at
   * the commit — the reply is recorded, and the conversation's next turn may
   * read it — with `onDisk`, which the send waits for; `result` is undefined
   * when the ledger failed.
   */
  async recordClaimed(platform: string, reply: SplitReply, deliverable: DeliverablePlatform | undefined): Promise<RecordedReply> {
    const input = recordInput(platform, reply);
    const id = input.obligationId;
    // Facts not yet written back: claim nothing until they are (see flushFacts).
    const record = (): RecordResult & { readonly claim?: ClaimedObligation } => (deliverable && this.facts.length === 0 ? this.ledger.recordClaimed(input, deliverable) : this.ledger.recordObligation(input));
    if (!this.group) {
      const result = this.monitor.guard('recordObligation', id, record);
      return { id, platform, reply, result, claim: result?.claim };
    }
    try {
      // One INSERT (recording it, claimed or not): no savepoint needed around it.
      const { value: result, onDisk } = await this.group.committed(record, { oneWrite: true });
      this.monitor.succeeded();
      if (result.created) {
        this.recording.set(id, onDisk);
        const forget = () => {
          if (this.recording.get(id) === onDisk) this.recording.delete(id);
        };
        onDisk.then(forget, forget);
      }
      return { id, platform, reply, result, claim: result.claim, onDisk };
    } catch (error) {
      this.monitor.failed('recordObligation', id, error);
      return { id, platform, reply, result: undefined };
    }
  }

  /**
   * Waits until the commit that recorded the reply is on the disk. A log that
   * could not be synced is a ledger failure, and the reply is `not-on-disk`:
   * committed (this process reads it, and so does the next start unless the
   * machine loses power first) but not known to be on the disk. Nothing of it
   * is sent then — a part sent now could be repeated plainly by a start that
   * finds the row but not the part's mark — and a claim made with the record
   * is given back, its first part no longer "on its way" (it never left):
   * the conversation's drain sends it once the log is healed.
   */
  async onDisk(recorded: RecordedReply): Promise<RecordedReply | 'not-on-disk'> {
    if (!recorded.onDisk) return recorded;
    try {
      await recorded.onDisk;
      return { ...recorded, onDisk: undefined };
    } catch (error) {
      const { id, claim } = recorded;
      this.monitor.failed('recordObligation', id, error);
      if (claim) {
        const marked = claim.sendingMarked;
        if (marked) this.after('markChunkUnsent', id, () => this.ledger.markChunkUnsent(claim.receipt, marked.index));
        this.after('release', id, () => this.ledger.release(claim.receipt));
        this.doneOnceCommitted(id);
      }
      return 'not-on-disk';
    }
  }

  /**
   * A conversation's next reply, claimed if it can go now (Ledger.claimNext) —
   * with a group, in the next group commit: after the writes of the send just
   * made (the last reply's delivered mark), in their transaction, instead of a
   * commit of its own once they are committed. Undefined when the ledger failed.
   */
  async claimNext(sessionKey: string, platforms: readonly DeliverablePlatform[]): Promise<NextInLane | undefined> {
    if (!this.group) return this.monitor.guard('claimNext', sessionKey, () => this.ledger.claimNext(sessionKey, platforms));
    let claimed: string | undefined;
    try {
      const next = await this.group.soon(() => {
        const found = this.ledger.claimNext(sessionKey, platforms);
        if (found.kind === 'claimed') claimed = found.claim.id;
        return found;
      });
      this.monitor.succeeded();
      return next;
    } catch (error) {
      // The commit failed: the claim was rolled back, so this process does not hold the row.
      if (claimed !== undefined) this.ledger.letGo(claimed);
      this.monitor.failed('claimNext', sessionKey, error);
      return undefined;
    }
  }

  /**
   * Writes back what was sent while the ledger failed, oldest first, then the
   * replies the ledger could not record (the journal). True when nothing is
   * left; false when the ledger still fails (then claim nothing).
   */
  flushFacts(): boolean {
    while (this.facts.length > 0) {
      const fact = this.facts[0]!;
      if (this.monitor.guard('replay', fact.id, () => this.ledger.replay(fact)) === undefined) return false;
      this.facts.shift();
    }
    const journal = this.journal;
    if (journal && this.unrecordedSending === 0 && journal.holdsReplies()) {
      if (this.monitor.guard('writeJournal', '-', () => journal.writeInto(this.ledger)) === undefined) return false;
    }
    for (const id of this.finishedWithFacts) this.ledger.letGo(id);
    this.finishedWithFacts.clear();
    return true;
  }

  /**
   * Sends a row this process has claimed, from the first chunk not known
   * delivered. Before each chunk the receipt is checked (with the write that
   * says the chunk is on its way): a row discarded meanwhile, or claimed again
   * after this instance was judged dead, stops here, after the chunk already
   * on its way.
   */
  async deliverClaimed(claim: ClaimedObligation, sender: PlatformSender, shouldStop: () => boolean = () => false): Promise<DeliveryOutcome> {
    const { id, receipt } = claim;
    const target = { chatId: claim.target.chatId, threadId: claim.target.threadId, replyTo: claim.target.replyTo };
    const remaining = claim.chunks.filter((chunk) => chunk.state !== 'delivered');
    let chunksSent = 0;
    // Gives the row back (no attempt spent) and ends here.
    const stop = (): DeliveryOutcome => {
      this.after('release', id, () => this.ledger.release(receipt));
      return { status: 'stopped', id, chunksSent, recorded: true };
    };
    try {
      for (const chunk of remaining) {
        if (shouldStop()) return stop();
        let marker = false;
        if (claim.sendingMarked?.index === chunk.index && chunksSent === 0) {
          // Marked on its way in the commit that recorded and claimed the reply.
          marker = claim.sendingMarked.marker;
        } else if (tracksArrival(sender)) {
          const sending = await this.beforeSend('markChunkSending', id, () => this.ledger.markChunkSending(receipt, chunk.index));
          if (!sending) {
            // Not marked: the part waits for the ledger (the lane tries again), the row is given back.
            this.after('release', id, () => this.ledger.release(receipt));
            return { status: 'waiting-for-ledger', id, chunksSent, recorded: true };
          }
          if (!sending.ok) return stop();
          marker = sending.marker;
        } else {
          // No durable write before this send: the reply's record (committed, maybe not fsynced yet) must be on disk first.
          const recording = chunksSent === 0 ? this.recording.get(id) : undefined;
          if (recording) await recording.catch(() => {}); // a failed sync is the recorder's to report
          if (this.monitor.guard('stillHolds', id, () => this.ledger.stillHolds(receipt)) === false) return stop();
        }
        // Keys that expire (Discord's nonce window): a resend the server still deduplicates needs no marker.
        if (marker && dedupCovers(sender, claim.recordedAt, this.clock.now())) marker = false;
        const result = await sendSafely(sender, marker ? withResendMarker(chunk.text) : chunk.text, {
          ...target,
          idempotencyKey: chunk.idempotencyKey,
        });
        if (!result.ok) {
          if (result.notDelivered && tracksArrival(sender)) {
            this.after('markChunkUnsent', id, () => this.ledger.markChunkUnsent(receipt, chunk.index));
          }
          // Lost with the connection: due again as soon as the platform is back, not after the backoff.
          const retryWhenConnected = result.retryable && !result.permanent && sender.canSend?.(target) === false;
          this.after('markFailed', id, () =>
            this.ledger.markFailed(receipt, {
              error: result.error,
              retryable: result.retryable,
              retryAfterMs: result.retryAfterMs,
              permanent: result.permanent,
              retryWhenConnected,
            }),
          );
          return { status: 'failed', id, chunksSent, recorded: true, error: result.error, retryable: result.retryable && !result.permanent, permanent: result.permanent };
        }
        chunksSent += 1;
        const delivered: SendFact = { kind: 'chunk-delivered', id, index: chunk.index, platformMessageId: result.platformMessageId };
        if (chunk === remaining.at(-1)) {
          this.after('markDelivered', id, () => this.ledger.markDelivered(receipt, { index: chunk.index, platformMessageId: result.platformMessageId }), delivered, {
            kind: 'delivered',
            id,
          });
        } else {
          this.after('markChunkDelivered', id, () => this.ledger.markChunkDelivered(receipt, chunk.index, result.platformMessageId), delivered);
        }
      }
      if (remaining.length === 0) this.after('markDelivered', id, () => this.ledger.markDelivered(receipt), { kind: 'delivered', id });
      return { status: 'delivered', id, chunksSent, recorded: true };
    } finally {
      this.doneOnceCommitted(id);
    }
  }

  /**
   * Sends a reply the ledger could not record (best effort — a reply is never
   * lost because its bookkeeping failed): from its first chunk, remembering
   * each step as a fact to write back. Its row (if it exists) stays held here
   * until those facts are written.
   *
   * With a journal, the reply and each part's "on its way" are first written
   * there, on the disk, so the ledger gets its row once it works again, here or
   * at the next start (unrecorded-journal.ts). A part whose mark the journal
   * cannot take is not sent (the journaled reply goes on from it once the ledger
   * has it); only a reply the journal refused outright goes out with nothing on
   * the disk (docs/delivery.md says what that can cost).
   */
  async sendUnrecorded(recorded: RecordedReply, sender: PlatformSender): Promise<DeliveryOutcome> {
    const { id, reply } = recorded;
    const texts = reply.chunks.length > 0 ? reply.chunks : [reply.content];
    const target = { chatId: reply.chatId, threadId: reply.threadId, replyTo: reply.replyTo };
    const chunks = unrecordedChunks(id, texts);
    this.ledger.hold(id);
    this.unrecordedSending++;
    const journaled = this.journal?.append([{ kind: 'reply', input: recordInput(recorded.platform, reply) }], true) === true;
    let chunksSent = 0;
    try {
      for (const chunk of chunks) {
        if (tracksArrival(sender)) {
          const sending: SendFact = { kind: 'chunk-sending', id, index: chunk.index };
          if (journaled && !this.journal!.append([sending], true)) {
            return { status: 'failed', id, chunksSent, recorded: false, error: 'neither the ledger nor its journal could mark the next part', retryable: true, permanent: false };
          }
          this.remember(sending);
        }
        const result = await sendSafely(sender, chunk.text, { ...target, idempotencyKey: chunk.idempotencyKey });
        if (!result.ok) {
          return { status: 'failed', id, chunksSent, recorded: false, error: result.error, retryable: result.retryable && !result.permanent, permanent: result.permanent };
        }
        chunksSent += 1;
        this.unrecordedFact(journaled, { kind: 'chunk-delivered', id, index: chunk.index, platformMessageId: result.platformMessageId });
      }
      this.unrecordedFact(journaled, { kind: 'delivered', id });
      return { status: 'delivered', id, chunksSent, recorded: false };
    } finally {
      this.unrecordedSending--;
      this.done(id);
      this.flushFacts();
    }
  }

  /** A fact of an unrecorded send after the fact (a confirmation): remembered, and journaled with no sync of its own. */
  private unrecordedFact(journaled: boolean, fact: SendFact): void {
    if (journaled) this.journal!.append([fact], false);
    this.remember(fact);
  }

  /**
   * A write about a send already made (delivered, failed, released): into the
   * next group commit when there is a group, else now. On failure the facts it
   * carried are kept to write back later.
   */
  private after(operation: string, id: string, call: () => unknown, ...facts: SendFact[]): void {
    if (!this.group) {
      this.write(operation, id, call, ...facts);
      return;
    }
    // Each of these is one UPDATE of the reply's row (markDelivered's move to the history
    // has a transaction of its own): no savepoint needed around it.
    this.group.later(
      call,
      (error) => {
        this.monitor.failed(operation, id, error);
        this.facts.push(...facts);
      },
      { oneWrite: true },
    );
  }

  /** A write that must be durable before the send it precedes: in the group commit of this turn, awaited. */
  private async beforeSend<T>(operation: string, id: string, call: () => T, ...facts: SendFact[]): Promise<T | undefined> {
    if (!this.group) return this.write(operation, id, call, ...facts);
    try {
      return await this.group.durable(call);
    } catch (error) {
      this.monitor.failed(operation, id, error);
      this.facts.push(...facts);
      return undefined;
    }
  }

  /** A ledger write of a send; on failure the facts it carried are kept to write back later. */
  private write<T>(operation: string, id: string, call: () => T, ...facts: SendFact[]): T | undefined {
    const result = this.monitor.guard(operation, id, call);
    if (result === undefined) this.facts.push(...facts);
    return result;
  }

  /** Writes a fact now if the ledger takes it, else keeps it. */
  private remember(fact: SendFact): void {
    // Behind an unwritten fact it waits its turn: facts are written back in order.
    if (this.facts.length === 0 && this.monitor.guard('replay', fact.id, () => this.ledger.replay(fact)) !== undefined) return;
    this.facts.push(fact);
  }

  /** Lets the row go once what was just written about it is committed (the next group commit; at once without a group). */
  private doneOnceCommitted(id: string): void {
    if (this.group) void this.group.flushed({ hurry: false }).then(() => this.done(id));
    else this.done(id);
  }

  private done(id: string): void {
    if (this.facts.some((fact) => fact.id === id)) this.finishedWithFacts.add(id);
    else this.ledger.letGo(id);
  }
}

function recordInput(platform: string, reply: SplitReply): RecordInput {
  return {
    obligationId: computeObligationId(reply.sessionKey, reply.messageRef, reply.content),
    sessionKey: reply.sessionKey,
    platform,
    chatId: reply.chatId,
    threadId: reply.threadId,
    replyTo: reply.replyTo,
    content: reply.content,
    chunks: reply.chunks,
    messageRef: reply.messageRef,
  };
}

/** Chunks as the ledger would have stored them (same keys), for when it could not. */
function unrecordedChunks(id: string, texts: readonly string[]): Chunk[] {
  return texts.map((text, index) => ({
    index,
    text,
    state: 'owed',
    platformMessageId: null,
    idempotencyKey: computeChunkKey(id, index),
    mayHaveArrived: false,
  }));
}

/** An adapter that throws is a failed send whose outcome is unknown. */
async function sendSafely(sender: PlatformSender, text: string, target: SendTarget): Promise<SendResult> {
  try {
    return await sender.send(text, target);
  } catch (error) {
    return { ok: false, retryable: true, permanent: false, error: error instanceof Error ? error.message : String(error) };
  }
}
