import { hash } from 'node:crypto';

/**
 * The obligation's id: the first 24 hex characters of sha256 of
 * `sessionKey|messageRef|content` (UTF-8). Recording the same turn with the same
 * reply twice therefore names the same row, which is what makes recording
 * idempotent. (`hash`, the one-shot form: a reply computes two of these, and it
 * takes less than half the time of a `createHash` object.)
 */
export function computeObligationId(sessionKey: string, messageRef: string, content: string): string {
  return hash('sha256', `${sessionKey}|${messageRef}|${content}`, 'hex').slice(0, 24);
}

/**
 * The idempotency key of one chunk, derived from the obligation id so that a
 * re-record or a resend after a crash always carries the same key. 24 hex
 * characters: within Discord's 25-character nonce and any Matrix txnId.
 */
export function computeChunkKey(obligationId: string, chunkIndex: number): string {
  return hash('sha256', `${obligationId}#${chunkIndex}`, 'hex').slice(0, 24);
}
