import { RESEND_MARKER_BYTES, RESEND_MARKER_RESERVE } from './marker';
import type { MessageLimits } from '../platforms/adapter';
import { splitMessage } from '../platforms/chunking';

/** The limits a reply is split to when its platform says none (not loaded: unknown to this build). */
export const FALLBACK_LIMITS: MessageLimits = { maxLength: 4000, unit: 'code-points' };

/**
 * Splits a reply for its platform, leaving room in every chunk for the resend
 * marker: a chunk resent after a crash gets the marker prefixed and must still
 * fit the platform's limit.
 */
export function splitReply(text: string, limits: MessageLimits): string[] {
  const reserve = limits.unit === 'bytes' ? RESEND_MARKER_BYTES : RESEND_MARKER_RESERVE;
  const room = Math.max(limits.maxLength - reserve, Math.ceil(limits.maxLength / 2));
  return splitMessage(text, { maxLength: room, unit: limits.unit });
}
