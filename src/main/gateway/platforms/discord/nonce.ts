import { createHash } from 'node:crypto';

/** Discord takes a nonce of at most 25 characters. */
export const MAX_NONCE_LENGTH = 25;

/**
 * The nonce a chunk is sent with: its idempotency key when that fits (the
 * ledger's keys are 24 hex characters), else a stable digest of it. The same
 * key gives the same nonce in every process, so a resend after a crash reuses it.
 */
export function nonceFor(idempotencyKey: string): string {
  if (/^[A-Za-z0-9_-]{1,25}$/.test(idempotencyKey)) return idempotencyKey;
  return createHash('sha256').update(idempotencyKey, 'utf8').digest('hex').slice(0, 24);
}
