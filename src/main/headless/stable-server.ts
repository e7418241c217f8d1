import type { ApiServer } from '../gateway/api/server';
import type { Logger } from '../gateway/logger';
import { DEFAULT_HEADLESS_PORT, readSavedAccess, saveAccess, tokenToServeWith } from './saved-access';
import { startHeadlessServer, type HeadlessServer } from './server';

export interface StableServerOptions {
  readonly dataDir: string;
  /** `--port N`: exactly this port (0: any free one). Absent: the saved port, else the default. */
  readonly port: number | undefined;
  readonly rendererDir: string;
  readonly api: ApiServer;
  readonly logger: Logger;
}

export type StableServerStart =
  | { readonly ok: true; readonly server: HeadlessServer; readonly movedFrom?: number }
  | { readonly ok: false; readonly message: string };

/**
 * Serves the window at the same URL as last time on this data directory: the
 * saved token, and the saved (else the default) port. When that port is taken,
 * any free port is used and saved, so the URL moves once and then stays. An
 * explicit `--port` is taken as asked, or refused when in use.
 */
export async function startStableServer(options: StableServerOptions): Promise<StableServerStart> {
  const saved = readSavedAccess(options.dataDir);
  if (!saved.ok && saved.reason === 'invalid') options.logger.warn('made a new headless access token', { why: saved.message });
  const token = tokenToServeWith(saved);
  const preferred = options.port ?? (saved.ok ? saved.access.port : DEFAULT_HEADLESS_PORT);
  const start = (port: number) =>
    startHeadlessServer({ port, token, rendererDir: options.rendererDir, api: options.api, logger: options.logger });

  let server: HeadlessServer;
  let movedFrom: number | undefined;
  try {
    server = await start(preferred);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    if (options.port !== undefined) return { ok: false, message: `port ${preferred} on 127.0.0.1 is in use; choose another with --port` };
    server = await start(0);
    movedFrom = preferred;
  }
  saveAccess(options.dataDir, { port: server.port, token });
  return { ok: true, server, ...(movedFrom === undefined ? {} : { movedFrom }) };
}
