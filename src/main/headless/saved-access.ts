import { chmodSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ACCESS_TOKEN_PATTERN, createAccessToken } from './access';

/**
 * `<dataDir>/headless.json`: the port and token the headless window was last
 * served with, so a bookmarked URL keeps working across restarts. Mode 0600:
 * the token is as good as the user's shell (setConfig can name any program as
 * the agent). Delete the file to get a new token (and a new URL) next start.
 */

export const SAVED_ACCESS_FILE = 'headless.json';

/**
 * The port tried first when none was saved or given. Fixed so the first URL is
 * already stable; when something else holds it, any free port is used instead
 * and saved for the next starts.
 */
export const DEFAULT_HEADLESS_PORT = 47474;

const savedAccessSchema = z.object({
  port: z.number().int().min(1).max(65535),
  token: z.string().regex(ACCESS_TOKEN_PATTERN),
});
export type SavedAccess = z.infer<typeof savedAccessSchema>;

export type SavedAccessRead =
  | { readonly ok: true; readonly access: SavedAccess }
  | { readonly ok: false; readonly reason: 'missing' | 'invalid'; readonly message: string };

export function savedAccessPath(dataDir: string): string {
  return join(dataDir, SAVED_ACCESS_FILE);
}

export function readSavedAccess(dataDir: string): SavedAccessRead {
  const file = savedAccessPath(dataDir);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { ok: false, reason: 'missing', message: `${file} does not exist` };
    return { ok: false, reason: 'invalid', message: `${file}: ${(error as Error).message}` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'invalid', message: `${file} is not JSON` };
  }
  const parsed = savedAccessSchema.safeParse(json);
  if (!parsed.success) return { ok: false, reason: 'invalid', message: `${file}: ${parsed.error.issues[0]?.path.join('.') || 'value'} is invalid` };
  return { ok: true, access: parsed.data };
}

/** The token to serve with: the saved one, else a fresh one (saved once the server listens). */
export function tokenToServeWith(saved: SavedAccessRead): string {
  return saved.ok ? saved.access.token : createAccessToken();
}

/** Writes the file whole (temp file + rename), readable by the user only. */
export function saveAccess(dataDir: string, access: SavedAccess): void {
  const file = savedAccessPath(dataDir);
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify(access, null, 2) + '\n', { mode: 0o600 });
  // The mode above is masked by the umask and ignored for an existing file.
  chmodSync(temp, 0o600);
  renameSync(temp, file);
}

export function headlessUrl(access: SavedAccess): string {
  return `http://127.0.0.1:${access.port}/?token=${access.token}`;
}
