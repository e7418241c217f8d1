import { closeSync, existsSync, fchmodSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import type { z } from 'zod';

/**
 * Replaces a file atomically and durably (temp file, fsync, rename), readable by
 * the user only (0600): a crash or power loss leaves the old content or the new,
 * never half of it. For settings and secrets, which are small.
 */
export function writePrivateFile(file: string, text: string): void {
  const temp = `${file}.${process.pid}.tmp`;
  const fd = openSync(temp, 'w', 0o600);
  try {
    // The mode given to open is filtered by the umask; make it exact.
    fchmodSync(fd, 0o600);
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
}

/** Moves a file that cannot be read out of the way, never deleting it; returns its new name. */
export function moveAside(file: string, now: number = Date.now()): string {
  const aside = `${file}.unreadable-${now}`;
  renameSync(file, aside);
  return aside;
}

/**
 * A JSON file's content checked against `schema`; undefined when there is no
 * file. A file that cannot be read as that is moved aside (see moveAside) and
 * `onUnreadable` is told where, then it reads as missing.
 */
export function readJsonOrMoveAside<T>(file: string, schema: z.ZodType<T>, onUnreadable: (movedTo: string) => void): T | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return schema.parse(JSON.parse(readFileSync(file, 'utf8')));
  } catch {
    onUnreadable(moveAside(file));
    return undefined;
  }
}
