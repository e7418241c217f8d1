import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { TOKEN_SUBPROTOCOL_PREFIX } from '../../shared/headless-auth';

/**
 * Who may talk to the headless server. It listens on 127.0.0.1 only, but any web
 * page the user visits can aim requests at loopback, and any other local program
 * can connect, so these checks stand:
 *  - the Host header must name loopback (a DNS-rebinding page arrives with its
 *    own host name, even though the connection lands on 127.0.0.1);
 *  - a WebSocket upgrade's Origin, when present, must be this server itself;
 *  - the API (the WebSocket) needs the access token explicitly on every
 *    connection: in its URL or as a subprotocol, never from a cookie;
 *  - static files need the token in their URL or the asset cookie. That cookie
 *    holds a key derived from the token, not the token: browsers send it to every
 *    port on 127.0.0.1, so any local server may read it, and it must unlock
 *    nothing but the window's own (public) files.
 * Nothing here throws on hostile input: a bad header is a refusal, not a crash.
 */

export function createAccessToken(): string {
  return randomBytes(32).toString('base64url');
}

/** What a saved token must look like (32 random bytes, base64url). */
export const ACCESS_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** True when a Host header names a loopback host (with this port, if it names one). */
export function isLoopbackHost(host: string | undefined, port: number): boolean {
  if (!host) return false;
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(host.trim().toLowerCase());
  if (!match) return false;
  const [, name, portText] = match;
  if (!LOOPBACK_HOSTS.has(name!)) return false;
  return portText === undefined || Number(portText) === port;
}

/** A WebSocket Origin is acceptable when absent (not a browser) or this very server. */
export function isAllowedOrigin(origin: string | undefined, port: number): boolean {
  if (origin === undefined) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  return url.protocol === 'http:' && isLoopbackHost(url.host, port) && url.port === String(port);
}

/** A request's path and query, or undefined when the request target is no URL at all (`//`, `http://[`). */
export function requestUrl(request: IncomingMessage, port: number): URL | undefined {
  try {
    return new URL(request.url ?? '/', `http://127.0.0.1:${port}`);
  } catch {
    return undefined;
  }
}

export function assetCookieName(port: number): string {
  // Cookies ignore ports: name it after the port so two gateways don't collide.
  return `homing_assets_${port}`;
}

/** The asset cookie's value: derived from the token, and useless for getting it back. */
export function assetKey(token: string): string {
  return createHmac('sha256', token).update('homing static assets').digest('base64url');
}

/** One cookie's raw value from a Cookie header, undefined when absent. Never decodes, never throws. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const trimmed = part.trim();
    if (trimmed.startsWith(name + '=')) return trimmed.slice(name.length + 1);
  }
  return undefined;
}

/** The token a WebSocket upgrade carries: `?token=` or a `homing.token.<token>` subprotocol. */
export function apiTokenFromUpgrade(request: IncomingMessage, url: URL): string | undefined {
  const fromQuery = url.searchParams.get('token');
  if (fromQuery) return fromQuery;
  const offered = request.headers['sec-websocket-protocol'];
  if (typeof offered !== 'string') return undefined;
  for (const protocol of offered.split(',')) {
    const trimmed = protocol.trim();
    if (trimmed.startsWith(TOKEN_SUBPROTOCOL_PREFIX)) return trimmed.slice(TOKEN_SUBPROTOCOL_PREFIX.length);
  }
  return undefined;
}

/** May this request read a static file? The token in its URL, or the asset cookie. */
export function mayReadAssets(request: IncomingMessage, url: URL, port: number, token: string): boolean {
  if (tokensEqual(url.searchParams.get('token') ?? undefined, token)) return true;
  return tokensEqual(cookieValue(request.headers.cookie, assetCookieName(port)), assetKey(token));
}

export function tokensEqual(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
