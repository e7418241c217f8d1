/**
 * Display names and message text come from other people. Before they reach a
 * transcript's name field, a log line, a preview or a terminal they lose what
 * could forge lines or reorder what is shown: control characters, bidi
 * overrides, line separators and unpaired surrogates.
 */
// eslint-disable-next-line no-control-regex
const UNSAFE_FOR_DISPLAY = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

export const MAX_DISPLAY_NAME = 128;
export const MAX_PREVIEW = 140;

/** One line, at most `max` code points, nothing that can forge or reorder text. */
export function toDisplayLine(value: string, max: number): string {
  const flat = value.replace(UNSAFE_FOR_DISPLAY, ' ').replace(/\s+/g, ' ').trim();
  const points = Array.from(flat);
  return points.length <= max ? flat : points.slice(0, max - 1).join('') + '…';
}

export function sanitizeDisplayName(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const clean = toDisplayLine(value, MAX_DISPLAY_NAME);
  return clean.length > 0 ? clean : undefined;
}

/**
 * Multi-line text for a terminal: keeps newlines and tabs, replaces every other
 * control character (ANSI escapes above all) with U+FFFD.
 */
export function toTerminalText(value: string): string {
  // eslint-disable-next-line no-control-regex
  return value.replace(/\r\n?/g, '\n').replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, '\ufffd');
}
