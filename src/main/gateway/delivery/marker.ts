/**
 * Prefixed to a chunk that may already have arrived (it was being sent when
 * the sender stopped) on a platform that cannot deduplicate a resend. The user
 * may see that part twice, but never silently twice.
 */
export const RESEND_MARKER = '↻ resent after an interruption — this part may be a repeat';

/**
 * Room a splitter must leave in each chunk for the marker (in UTF-16 units; the
 * marker is ASCII except for two BMP characters, so code points and UTF-16
 * agree, and its UTF-8 size is RESEND_MARKER_BYTES).
 */
export const RESEND_MARKER_RESERVE = RESEND_MARKER.length + 1;
export const RESEND_MARKER_BYTES = Buffer.byteLength(RESEND_MARKER + '\n', 'utf8');

export function withResendMarker(text: string): string {
  return `${RESEND_MARKER}\n${text}`;
}
