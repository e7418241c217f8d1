import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * Who may talk to the headless server. It listens on 127.0.0.1 only, but any web
 * page the user visits can aim requests at loopback, so three checks stand:
 *  - the Host header must name loopback (a DNS-rebinding page arrives with its
 *    own host name, even though the connection lands on 127.0.0.1);
 *  - a WebSocket upgrade's Origin, when present, must be this server itself;
 *  - every request carries the access token (query or the cookie set from it).
 */

export function createAccessToken(): string {
  return randomBytes(32).toString('base64url');
}

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

export function cookieName(port: number): string {
  // Cookies ignore ports: name it after the port so two gateways don't collide.
  return `homing_token_${port}`;
}

export function tokenFromRequest(request: IncomingMessage, url: URL, port: number): string | undefined {
  const fromQuery = url.searchParams.get('token');
  if (fromQuery) return fromQuery;
  const cookies = request.headers.cookie ?? '';
  const name = cookieName(port) + '=';
  for (const part of cookies.split(';')) {
    const trimmed = part.trim();
    if (trimmed.startsWith(name)) return decodeURIComponent(trimmed.slice(name.length));
  }
  return undefined;
}

export function tokensEqual(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
