/** Where one chunk goes, and the key a resend of it reuses. */
export interface SendTarget {
  readonly chatId: string;
  readonly threadId: string | null;
  /** The message being answered; adapters decide how (or whether) each chunk quotes it. */
  readonly replyTo: string | null;
  /** Stable per chunk across resends and restarts (Matrix txnId, Discord nonce, Message-ID, origin-id). */
  readonly idempotencyKey: string;
}

export type SendResult =
  | { readonly ok: true; readonly platformMessageId: string }
  | {
      readonly ok: false;
      readonly retryable: boolean;
      /** The platform's retry-after (e.g. Telegram's parameters.retry_after × 1000). */
      readonly retryAfterMs?: number;
      /** Blocked, chat gone, forbidden: the row fails without retrying. */
      readonly permanent: boolean;
      readonly error: string;
      /**
       * Set when the platform answered with a refusal, so the message surely did
       * not arrive. Leave unset after a timeout or a dropped connection: then it
       * may have arrived, and its resend carries the marker.
       */
      readonly notDelivered?: boolean;
    };

/** What the delivery loop needs from a platform adapter (issue 5 implements it). */
export interface PlatformSender {
  readonly name: string;
  /** True where the server deduplicates a resend with the same key (Matrix, Discord). */
  readonly serverIdempotency: boolean;
  /**
   * With serverIdempotency: how long the server remembers a key (Discord's
   * nonce window); absent: for good. The ledger then tracks "may have arrived"
   * as for a platform without keys, and the deliverer drops the marker only
   * for a resend inside the window (see dedupCovers).
   */
  readonly dedupWindowMs?: number;
  /** Whether a send to this destination can go out now (the adapter's canSend; absent: yes). */
  canSend?(target: { readonly chatId: string; readonly threadId: string | null }): boolean;
  send(text: string, target: SendTarget): Promise<SendResult>;
}

/**
 * Whether the server is sure to deduplicate a resend of a chunk of a reply
 * recorded at `recordedAt`: always where keys never expire; inside the window
 * otherwise. Every send of a chunk happens after its reply was recorded, so
 * a resend within the window of the recording is within the window of the
 * chunk's first send (a clock that went back counts as outside).
 */
export function dedupCovers(sender: Pick<PlatformSender, 'serverIdempotency' | 'dedupWindowMs'>, recordedAt: number, now: number): boolean {
  if (!sender.serverIdempotency) return false;
  if (sender.dedupWindowMs === undefined) return true;
  const age = now - recordedAt;
  return age >= 0 && age < sender.dedupWindowMs;
}

/** Whether the ledger must track "may have arrived" for this sender's chunks (no keys, or keys that expire). */
export function tracksArrival(sender: Pick<PlatformSender, 'serverIdempotency' | 'dedupWindowMs'>): boolean {
  return !sender.serverIdempotency || sender.dedupWindowMs !== undefined;
}
