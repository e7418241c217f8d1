import { createHash } from 'node:crypto';

/**
 * The obligation's id: the first 24 hex characters of sha256 of
 * `sessionKey|messageRef|content` (UTF-8). Recording the same turn with the same
 * reply twice therefore names the same row, which is what makes recording
 * idempotent.
 */
export function computeObligationId(sessionKey: string, messageRef: string, content: string): string {
  return createHash('sha256').update(`${sessionKey}|${messageRef}|${content}`, 'utf8').digest('hex').slice(0, 24);
}

/**
 * The idempotency key of one chunk, derived from the obligation id so that a
 * re-record or a resend after a crash always carries the same key. 24 hex
 * characters: within Discord's 25-character nonce and any Matrix txnId.
 */
export function computeChunkKey(obligationId: string, chunkIndex: number): string {
  return createHash('sha256').update(`${obligationId}#${chunkIndex}`, 'utf8').digest('hex').slice(0, 24);
}
