import { rateLimitedLogger, type Logger } from './logger';

/**
 * Keeps the gateway process running when a promise inside a library rejects
 * with nobody to hear it (Node would end the process): discord.js's Gateway
 * client does so on some sequences a broken or hostile server can send (an
 * INVALID_SESSION or RECONNECT flood: "Tried to connect a shard that wasn't
 * idle"). The rejection is logged (rate-limited) and the adapter's own
 * reconnecting carries on; an uncaught *exception* still ends the process, for
 * the supervisor (or the service manager) to start it again. For the process
 * entry points only (the headless command, the tray app's gateway host).
 */
export function keepRunningOnUnhandledRejections(logger: Logger): () => void {
  const log = rateLimitedLogger(logger);
  const listener = (reason: unknown) => {
    log.error('an error inside a library was not handled; the gateway keeps running', { error: reason instanceof Error ? reason.stack ?? reason.message : String(reason) });
  };
  process.on('unhandledRejection', listener);
  return () => process.off('unhandledRejection', listener);
}

/**
 * Keeps the headless gateway running when its output goes away: `homing
 * gateway | head`, a terminal closed under it, a log pipe whose reader died.
 * Node reports a write to a closed pipe (EPIPE) as an 'error' event on
 * process.stdout/stderr, and an unhandled 'error' event ends the process — the
 * gateway used to vanish at its next log line, saying nothing. From the first
 * such error on, writes to that stream are dropped (`isOpen` says whether to
 * write at all), and the other stream, if it is still open, says so once. The
 * gateway's log stays in the window's Logs panel.
 */
export function keepRunningWhenOutputCloses(
  streams: { readonly stdout: NodeJS.WriteStream | NodeJS.WritableStream; readonly stderr: NodeJS.WriteStream | NodeJS.WritableStream } = process,
): { readonly isOpen: (which: 'stdout' | 'stderr') => boolean } {
  const closed = new Set<'stdout' | 'stderr'>();
  for (const which of ['stdout', 'stderr'] as const) {
    streams[which].on('error', (error: NodeJS.ErrnoException) => {
      if (closed.has(which)) return;
      closed.add(which);
      const other = which === 'stdout' ? 'stderr' : 'stdout';
      if (!closed.has(other)) {
        streams[other].write(
          `homing: ${which} was closed (${error.code ?? error.message}); the gateway keeps running without writing there — its log is in the window's Logs panel\n`,
        );
      }
    });
  }
  return { isOpen: (which) => !closed.has(which) };
}
