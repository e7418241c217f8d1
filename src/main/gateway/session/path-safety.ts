import { dirname, isAbsolute, relative, resolve } from 'node:path';

/**
 * Two validators on purpose, because the two kinds of string meet the file
 * system differently:
 *
 * - A session id becomes a file name (`sessions/<id>.jsonl`). The operating
 *   system gives meaning to separators, `..`, drive letters, reserved device
 *   names (CON, NUL, COM1 on Windows) and trailing dots or spaces (which Windows
 *   strips, so two names alias one file). Homing generates session ids itself,
 *   so `isPathUnsafe` can afford to be strict: anything but a plain, short name
 *   is refused.
 * - A session key is a logical routing key: compared for equality in SQLite,
 *   never joined into a path. It must carry platform ids verbatim (case, and
 *   `/` in Google Chat's `spaces/<id>/threads/<id>`), so refusing `/` would
 *   force a lossy rewrite that could merge two chats into one session.
 *   `isSessionKeyUnsafe` therefore refuses only what would be dangerous if a key
 *   ever were used as a path (`..` segments, a leading separator, a drive
 *   prefix) or would corrupt a log line (control characters).
 *
 * Neither is enough alone for paths: `resolveInside` also resolves the final
 * path and checks that it lies directly inside the sessions directory.
 */

/** Conservative: NAME_MAX is 255 bytes, and the name gets a `.jsonl` suffix. */
export const MAX_FILE_NAME_LENGTH = 120;

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** Characters Windows refuses in names, plus both separators. */
const FORBIDDEN_IN_NAME = /[<>:"/\\|?*]/;
/** Bidi and zero-width format characters: they disguise a name's real text. */
const FORMAT = /[\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)(\..*)?$/i;
const DRIVE_PREFIX = /^[A-Za-z]:/;

export function isPathUnsafe(value: string): boolean {
  if (value.length === 0 || value.length > MAX_FILE_NAME_LENGTH) return true;
  if (LONE_SURROGATE.test(value)) return true;
  // Check the NFKC form too: fullwidth `．．／` folds to `../` in some APIs.
  for (const form of new Set([value, value.normalize('NFKC')])) {
    if (form.includes('..') || form === '.') return true;
    if (CONTROL.test(form) || FORBIDDEN_IN_NAME.test(form) || FORMAT.test(form)) return true;
    if (DRIVE_PREFIX.test(form) || WINDOWS_RESERVED.test(form)) return true;
    if (/[. ]$/.test(form) || /^ /.test(form)) return true;
  }
  return false;
}

export function isSessionKeyUnsafe(value: string): boolean {
  if (value.length === 0) return true;
  if (CONTROL.test(value) || LONE_SURROGATE.test(value)) return true;
  if (value.startsWith('/') || value.startsWith('\\') || DRIVE_PREFIX.test(value)) return true;
  return value.split(/[/\\:]/).some((segment) => segment === '..');
}

export class UnsafePathError extends Error {
  override readonly name = 'UnsafePathError';
}

/**
 * The path of `<name><suffix>` directly inside `dir`, or an UnsafePathError: the
 * name must pass `isPathUnsafe`, and the resolved path must still be a direct
 * child of the resolved directory.
 */
export function resolveInside(dir: string, name: string, suffix = ''): string {
  if (isPathUnsafe(name)) throw new UnsafePathError(`refused an unsafe file name ${JSON.stringify(name.slice(0, 80))}`);
  const base = resolve(dir);
  const full = resolve(base, name + suffix);
  const rel = relative(base, full);
  if (rel.length === 0 || isAbsolute(rel) || rel.startsWith('..') || dirname(full) !== base) {
    throw new UnsafePathError(`refused a path outside ${base}: ${JSON.stringify(name.slice(0, 80))}`);
  }
  return full;
}
