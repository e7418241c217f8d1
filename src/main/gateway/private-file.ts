import { closeSync, fchmodSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';

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
