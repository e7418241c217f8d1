import { RESEND_MARKER_BYTES, RESEND_MARKER_RESERVE } from '../delivery/marker';
import type { MessageLimits } from '../platforms/adapter';
import { splitMessage } from '../platforms/chunking';

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
