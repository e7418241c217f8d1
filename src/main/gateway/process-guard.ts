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
