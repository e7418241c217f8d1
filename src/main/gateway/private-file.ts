import { chmodSync, closeSync, existsSync, fchmodSync, fsyncSync, lstatSync, openSync, readdirSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

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

/**
 * Sets `root` and every directory under it to 0700 and every file to 0600,
 * touching only those whose mode differs. Symbolic links are neither followed
 * nor changed: chmod would act on their target, which may be outside the
 * directory. Returns what could not be changed (or read), so the caller can say so.
 */
export function tightenTree(root: string): { path: string; error: string }[] {
  const failures: { path: string; error: string }[] = [];
  const pending = [root];
  while (pending.length > 0) {
    const dir = pending.pop()!;
    if (!tighten(dir, PRIVATE_DIR_MODE, failures)) continue;
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch (error) {
      failures.push({ path: dir, error: (error as Error).message });
      continue;
    }
    for (const name of names) {
      const path = join(dir, name);
      let stat;
      try {
        stat = lstatSync(path);
      } catch {
        continue; // Gone since it was listed.
      }
      if (stat.isDirectory()) pending.push(path);
      else if (stat.isFile()) tighten(path, PRIVATE_FILE_MODE, failures, stat.mode);
    }
  }
  return failures;
}

function tighten(path: string, mode: number, failures: { path: string; error: string }[], current?: number): boolean {
  try {
    if (((current ?? lstatSync(path).mode) & 0o7777) !== mode) chmodSync(path, mode);
    return true;
  } catch (error) {
    failures.push({ path, error: (error as Error).message });
    return false;
  }
}
