import { existsSync } from 'node:fs';

/**
 * Why a program could not be started, in words. A missing working directory
 * also surfaces as ENOENT, so "not found" alone would blame the wrong thing.
 */
export function describeSpawnError(error: NodeJS.ErrnoException, cwd: string | undefined): string {
  if (error.code === 'ENOENT') {
    return cwd !== undefined && !existsSync(cwd) ? `its working directory ${cwd} does not exist` : 'not found';
  }
  if (error.code === 'EACCES') return 'permission denied (is it executable?)';
  return error.message;
}
