import { readFileSync } from 'node:fs';

/**
 * Whether a process is running. A zombie (exited, not yet reaped by its parent)
 * counts as gone: it runs nothing, and its parent may reap it at any moment.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    // No /proc (macOS): the signal check above is all there is.
    return process.platform !== 'linux';
  }
}
