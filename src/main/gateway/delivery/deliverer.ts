import type { LedgerHealth } from '../../../shared/api';
import type { Clock } from '../clock';
import type { Ledger } from '../ledger/ledger';
import { computeChunkKey, computeObligationId } from '../ledger/obligation-id';
import type { Chunk, ClaimedObligation, RecordResult } from '../ledger';
import type { Logger } from '../logger';
import { LedgerHealthMonitor } from './ledger-health';
import { withResendMarker } from './marker';
import type { PlatformSender, SendResult } from './sender';

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
  /** Nothing sent: already delivered, or another live instance is sending it. */
  | { readonly status: 'skipped'; readonly id: string; readonly reason: 'already-delivered' | 'owned-elsewhere' | 'not-owed' };

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
  readonly reply: NewReply;
  readonly result: RecordResult | undefined;
}

interface Plan {
  readonly id: string;
  readonly chunks: readonly Chunk[];
  /** Prefix the marker to the first chunk sent. */
  readonly marker: boolean;
  readonly target: { readonly chatId: string; readonly threadId: string | null; readonly replyTo: string | null };
  /** False when the ledger could not record the reply: send, but write nothing more. */
  readonly recorded: boolean;
}

/**
 * The send loop: records the reply, claims it, sends it chunk by chunk from
 * the first chunk not known delivered, and records each step. Best effort: a
 * ledger failure is logged, counted and reported (ledgerHealth), and the reply
 * is sent anyway — a reply is never lost because its bookkeeping failed. Nothing
 * here throws into the caller.
 */
export class Deliverer {
  private readonly monitor: LedgerHealthMonitor;
  private readonly ledger: Ledger;

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

  /**
   * Records a reply durably (owed, pending) before anything is sent; with its
   * platform not connected it waits there for the sweep that runs when the
   * platform connects. `result` is undefined when the ledger failed (logged and counted).
   */
  recordReply(platform: string, reply: NewReply): RecordedReply {
    const id = computeObligationId(reply.sessionKey, reply.messageRef, reply.content);
    return { id, reply, result: this.record(id, platform, reply) };
  }

  /** Records a reply for later (see recordReply): its id, or undefined when the ledger failed. */
  recordOnly(platform: string, reply: NewReply): string | undefined {
    const recorded = this.recordReply(platform, reply);
    return recorded.result ? recorded.id : undefined;
  }

  /** A new reply: record it durably, then send it. */
  async deliverReply(reply: NewReply, sender: PlatformSender): Promise<DeliveryOutcome> {
    return this.sendRecorded(this.recordReply(sender.name, reply), sender);
  }

  /** Sends a reply recordReply has just recorded (or failed to record: then it is sent unrecorded). */
  async sendRecorded({ id, reply, result: recorded }: RecordedReply, sender: PlatformSender): Promise<DeliveryOutcome> {
    const texts = reply.chunks.length > 0 ? reply.chunks : [reply.content];
    const target = { chatId: reply.chatId, threadId: reply.threadId, replyTo: reply.replyTo };
    if (!recorded) return this.send({ id, chunks: unrecordedChunks(id, texts), marker: false, target, recorded: false }, sender);
    if (!recorded.created && recorded.row.state === 'delivered') {
      return { status: 'skipped', id, reason: 'already-delivered' };
    }
    const attempt = this.monitor.guard('markAttempting', id, () => this.ledger.markAttempting(id));
    if (attempt && !attempt.ok) {
      if (attempt.reason === 'not-found') {
        return this.send({ id, chunks: unrecordedChunks(id, texts), marker: false, target, recorded: false }, sender);
      }
      return { status: 'skipped', id, reason: attempt.state === 'delivered' ? 'already-delivered' : attempt.reason };
    }
    // A row just created holds exactly these chunks, all owed; an existing one may have progress.
    const stored = recorded.created ? undefined : this.monitor.guard('chunks', id, () => this.ledger.chunks(id));
    const chunks = stored && stored.length > 0 ? stored : unrecordedChunks(id, texts);
    const first = chunks.find((chunk) => chunk.state !== 'delivered');
    const marker = first?.state === 'sending' && !sender.serverIdempotency;
    return this.send({ id, chunks, marker, target, recorded: true }, sender);
  }

  private record(id: string, platform: string, reply: NewReply) {
    return this.monitor.guard('recordObligation', id, () =>
      this.ledger.recordObligation({
        obligationId: id,
        sessionKey: reply.sessionKey,
        platform,
        chatId: reply.chatId,
        threadId: reply.threadId,
        replyTo: reply.replyTo,
        content: reply.content,
        chunks: reply.chunks,
      }),
    );
  }

  /** A row the sweep just claimed for this process: resume where its sender stopped. */
  async deliverClaimed(claimed: ClaimedObligation, sender: PlatformSender): Promise<DeliveryOutcome> {
    const { chatId, threadId, replyTo } = claimed.target;
    return this.send(
      {
        id: claimed.id,
        chunks: claimed.chunks,
        marker: claimed.needsMarker,
        target: { chatId, threadId, replyTo },
        recorded: true,
      },
      sender,
    );
  }

  private async send(plan: Plan, sender: PlatformSender): Promise<DeliveryOutcome> {
    const { id, recorded } = plan;
    const write = <T>(operation: string, call: () => T): T | undefined =>
      recorded ? this.monitor.guard(operation, id, call) : undefined;
    let chunksSent = 0;
    let marker = plan.marker;
    for (const chunk of plan.chunks) {
      // A chunk known delivered is never sent again.
      if (chunk.state === 'delivered') continue;
      // Recorded before the send, so a crash during it leaves "may have arrived"
      // behind. Skipped where the server deduplicates: the key alone is enough.
      if (!sender.serverIdempotency) write('markChunkSending', () => this.ledger.markChunkSending(id, chunk.index));
      const text = marker ? withResendMarker(chunk.text) : chunk.text;
      marker = false;
      const result = await sendSafely(sender, text, { ...plan.target, idempotencyKey: chunk.idempotencyKey });
      if (!result.ok) {
        if (result.notDelivered && !sender.serverIdempotency) {
          write('markChunkUnsent', () => this.ledger.markChunkUnsent(id, chunk.index));
        }
        write('markFailed', () =>
          this.ledger.markFailed(id, {
            error: result.error,
            retryable: result.retryable,
            retryAfterMs: result.retryAfterMs,
            permanent: result.permanent,
          }),
        );
        return {
          status: 'failed',
          id,
          chunksSent,
          recorded,
          error: result.error,
          retryable: result.retryable && !result.permanent,
          permanent: result.permanent,
        };
      }
      chunksSent += 1;
      write('markChunkDelivered', () => this.ledger.markChunkDelivered(id, chunk.index, result.platformMessageId));
    }
    write('markDelivered', () => this.ledger.markDelivered(id));
    return { status: 'delivered', id, chunksSent, recorded };
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
  }));
}

/** An adapter that throws is a failed send whose outcome is unknown. */
async function sendSafely(sender: PlatformSender, text: string, target: Parameters<PlatformSender['send']>[1]): Promise<SendResult> {
  try {
    return await sender.send(text, target);
  } catch (error) {
    return { ok: false, retryable: true, permanent: false, error: error instanceof Error ? error.message : String(error) };
  }
}
