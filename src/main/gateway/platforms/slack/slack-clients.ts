import type { SocketModeClient } from '@slack/socket-mode';
import type { WebClient, WebClientOptions } from '@slack/web-api';
import type { Logger } from '../../logger';
import { loadSlackSocketMode, loadSlackWebApi } from './load-slack';

/** The most a Web API answer may weigh: a history page of 200 messages is well below it. */
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

/**
 * The Slack libraries' logger, onto Homing's: warnings and errors only. Their
 * debug lines carry request bodies and every WebSocket message (people's
 * texts), so they are never passed on; every line is redacted of the tokens.
 */
function libraryLogger(logger: Logger, redact: (text: string) => string) {
  const line = (parts: unknown[]) => redact(parts.map((part) => (part instanceof Error ? part.message : String(part))).join(' ')).slice(0, 500);
  return {
    debug: () => {},
    info: () => {},
    warn: (...parts: unknown[]) => logger.warn(`slack (library): ${line(parts)}`),
    error: (...parts: unknown[]) => logger.warn(`slack (library): ${line(parts)}`),
    setLevel: () => {},
    getLevel: () => 'warn' as never,
    setName: () => {},
  };
}

/**
 * Web API options Homing always uses: the API base (a fake's in tests), no
 * retries of its own (a 429 comes back at once, as a `rate_limited` error, so
 * the adapter decides how long to wait and the ledger never loses an attempt
 * to it; a failed call is the ledger's or the catch-up's to try again), a
 * timeout, and a size limit on every answer (axios's `maxContentLength`).
 */
export function webClientOptions(apiUrl: string, timeoutMs: number, logger: Logger, redact: (text: string) => string): WebClientOptions {
  return {
    slackApiUrl: apiUrl,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: timeoutMs,
    logger: libraryLogger(logger, redact),
    requestInterceptor: (config) => ({ ...config, maxContentLength: MAX_RESPONSE_BYTES, maxBodyLength: MAX_RESPONSE_BYTES }),
  };
}

export async function newWebClient(token: string, apiUrl: string, timeoutMs: number, logger: Logger, redact: (text: string) => string): Promise<WebClient> {
  const { WebClient } = await loadSlackWebApi();
  return new WebClient(token, webClientOptions(apiUrl, timeoutMs, logger, redact));
}

/**
 * A Socket Mode client for one connection. Its own reconnecting is off: the
 * adapter opens every connection itself (a fresh single-use URL from
 * `apps.connections.open` each time), so a failed reconnect is never an
 * unhandled rejection inside the library and the backoff is Homing's.
 */
export async function newSocketModeClient(appToken: string, apiUrl: string, logger: Logger, redact: (text: string) => string): Promise<SocketModeClient> {
  const { SocketModeClient } = await loadSlackSocketMode();
  const { logger: _own, ...clientOptions } = webClientOptions(apiUrl, 30_000, logger, redact);
  return new SocketModeClient({ appToken, autoReconnectEnabled: false, logger: libraryLogger(logger, redact) as never, clientOptions });
}
