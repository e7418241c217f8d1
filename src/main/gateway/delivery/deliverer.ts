import type { LedgerHealth } from '../../../shared/api';
import type { Clock } from '../clock';
import type { Ledger } from '../ledger/ledger';
import { computeChunkKey, computeObligationId } from '../ledger/obligation-id';
import type { Chunk, ClaimedObligation, RecordResult, SendFact } from '../ledger';
import type { Logger } from '../logger';
import { LedgerHealthMonitor } from './ledger-health';
import { withResendMarker } from './marker';
import type { PlatformSender, SendResult, SendTarget } from './sender';

/** A final reply the pipeline hands over, already split to the platform's limit. */
export interface NewReply {
  readonly sessionKey: string;
  /** The platform's reference of the message this reply answers (part of the id). */
  readonly messageRef: string;
  readonly chatId: string;
  readonly threadId: string | null;
  readonly replyTo: string | null;
  readonly content: string;
  /** The content split for the platform, leaving RESEND_MARKER_RESERVE room per chunk. */
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
  /** Nothing sent: already delivered, not owed, or another live sender has it. */
  | { readonly status: 'skipped'; readonly id: string; readonly reason: string };

export interface DelivererOptions {
  readonly ledger: Ledger;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Called on each ledger failure (the gateway emits `ledger.health`). */
  readonly onLedgerFailure?: (health: LedgerHealth) => void;
}

/** A reply as recordReply left it: `result` is undefined when the ledger failed. */
export interface RecordedReply {
  readonly id: string;
  readonly platform: string;
  readonly reply: NewReply;
  readonly result: RecordResult | undefined;
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
  private readonly facts: SendFact[] = [];
  /** Rows whose send loop has ended but whose facts are not written yet. */
  private readonly finishedWithFacts = new Set<string>();

  constructor(options: DelivererOptions) {
    this.ledger = options.ledger;
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
  recordReply(platform: string, reply: NewReply): RecordedReply {
    const id = computeObligationId(reply.sessionKey, reply.messageRef, reply.content);
    const result = this.monitor.guard('recordObligation', id, () =>
      this.ledger.recordObligation({
        obligationId: id,
        sessionKey: reply.sessionKey,
        platform,
        chatId: reply.chatId,
        threadId: reply.threadId,
        replyTo: reply.replyTo,
        content: reply.content,
        chunks: reply.chunks,
        messageRef: reply.messageRef,
      }),
    );
    return { id, platform, reply, result };
  }

  /**
   * Writes back what was sent while the ledger failed, oldest first. True when
   * nothing is left; false when the ledger still fails (then claim nothing).
   */
  flushFacts(): boolean {
    while (this.facts.length > 0) {
      const fact = this.facts[0]!;
      if (this.monitor.guard('replay', fact.id, () => this.ledger.replay(fact)) === undefined) return false;
      this.facts.shift();
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
      this.write('release', id, () => this.ledger.release(receipt));
      return { status: 'stopped', id, chunksSent, recorded: true };
    };
    try {
      for (const chunk of remaining) {
        if (shouldStop()) return stop();
        let marker = false;
        if (!sender.serverIdempotency) {
          const sending = this.write('markChunkSending', id, () => this.ledger.markChunkSending(receipt, chunk.index), {
            kind: 'chunk-sending',
            id,
            index: chunk.index,
          });
          if (sending && !sending.ok) {
            return stop();
          }
          // Unknown (the ledger failed): what the claim saw is the best knowledge there is.
          marker = sending ? sending.marker : chunk.mayHaveArrived;
        } else if (this.monitor.guard('stillHolds', id, () => this.ledger.stillHolds(receipt)) === false) {
          return stop();
        }
        const result = await sendSafely(sender, marker ? withResendMarker(chunk.text) : chunk.text, {
          ...target,
          idempotencyKey: chunk.idempotencyKey,
        });
        if (!result.ok) {
          if (result.notDelivered && !sender.serverIdempotency) {
            this.write('markChunkUnsent', id, () => this.ledger.markChunkUnsent(receipt, chunk.index));
          }
          // Lost with the connection: due again as soon as the platform is back, not after the backoff.
          const retryWhenConnected = result.retryable && !result.permanent && sender.canSend?.(target) === false;
          this.write('markFailed', id, () =>
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
          this.write('markDelivered', id, () => this.ledger.markDelivered(receipt, { index: chunk.index, platformMessageId: result.platformMessageId }), delivered, {
            kind: 'delivered',
            id,
          });
        } else {
          this.write('markChunkDelivered', id, () => this.ledger.markChunkDelivered(receipt, chunk.index, result.platformMessageId), delivered);
        }
      }
      if (remaining.length === 0) this.write('markDelivered', id, () => this.ledger.markDelivered(receipt), { kind: 'delivered', id });
      return { status: 'delivered', id, chunksSent, recorded: true };
    } finally {
      this.done(id);
    }
  }

  /**
   * Sends a reply the ledger could not record or claim (best effort): plainly,
   * from its first chunk, remembering each step as a fact to write back. Its
   * row (if it exists) stays held here until those facts are written.
   */
  async sendUnrecorded(recorded: RecordedReply, sender: PlatformSender): Promise<DeliveryOutcome> {
    const { id, reply } = recorded;
    const texts = reply.chunks.length > 0 ? reply.chunks : [reply.content];
    const target = { chatId: reply.chatId, threadId: reply.threadId, replyTo: reply.replyTo };
    const chunks = unrecordedChunks(id, texts);
    this.ledger.hold(id);
    let chunksSent = 0;
    try {
      for (const chunk of chunks) {
        if (!sender.serverIdempotency) this.remember({ kind: 'chunk-sending', id, index: chunk.index });
        const result = await sendSafely(sender, chunk.text, { ...target, idempotencyKey: chunk.idempotencyKey });
        if (!result.ok) {
          return { status: 'failed', id, chunksSent, recorded: false, error: result.error, retryable: result.retryable && !result.permanent, permanent: result.permanent };
        }
        chunksSent += 1;
        this.remember({ kind: 'chunk-delivered', id, index: chunk.index, platformMessageId: result.platformMessageId });
      }
      this.remember({ kind: 'delivered', id });
      return { status: 'delivered', id, chunksSent, recorded: false };
    } finally {
      this.done(id);
      this.flushFacts();
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

  private done(id: string): void {
    if (this.facts.some((fact) => fact.id === id)) this.finishedWithFacts.add(id);
    else this.ledger.letGo(id);
  }
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
