import { createReadStream, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { extname, join, resolve, sep } from 'node:path';
import { WebSocketServer } from 'ws';
import { API_SUBPROTOCOL } from '../../shared/headless-auth';
import type { ApiServer } from '../gateway/api/server';
import { rateLimitedLogger, type Logger } from '../gateway/logger';
import { contentSecurityPolicy } from '../security';
import {
  apiTokenFromUpgrade,
  assetCookieName,
  assetKey,
  createAccessToken,
  isAllowedOrigin,
  isLoopbackHost,
  mayReadAssets,
  requestUrl,
  tokensEqual,
} from './access';
import { webSocketPipe } from './websocket-pipe';

export const API_PATH = '/api';
const HOST = '127.0.0.1';
/**
 * Largest WebSocket message accepted (1 MiB): the largest real request (a config
 * with its forms) is a few kilobytes. A bigger frame closes the connection (1009).
 */
export const MAX_MESSAGE_BYTES = 1 << 20;
/** Open API connections at once; each window holds one. */
export const MAX_CONNECTIONS = 64;

export interface HeadlessServerOptions {
  readonly port: number;
  /** The built renderer (`out/renderer`). */
  readonly rendererDir: string;
  readonly api: ApiServer;
  readonly logger: Logger;
  readonly token?: string;
}

export interface HeadlessServer {
  readonly port: number;
  readonly token: string;
  /** The URL to open, carrying the access token. */
  readonly url: string;
  close(): Promise<void>;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

function securityHeaders(port: number): Record<string, string> {
  return {
    // Only this server's own WebSocket.
    'Content-Security-Policy': contentSecurityPolicy(`ws://127.0.0.1:${port} ws://localhost:${port}`),
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    // The token rides in the first URL: never send it on as a Referer.
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
  };
}

/** Serves the window and the API on 127.0.0.1, behind the access token. */
export async function startHeadlessServer(given: HeadlessServerOptions): Promise<HeadlessServer> {
  // Whoever can reach the port can make these lines: each cause is logged a few times a minute, the rest counted.
  const options = { ...given, logger: rateLimitedLogger(given.logger) };
  const token = options.token ?? createAccessToken();
  const rendererDir = resolve(options.rendererDir);
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_MESSAGE_BYTES,
    // Answer with the API's subprotocol, never echo the token one.
    handleProtocols: (protocols) => (protocols.has(API_SUBPROTOCOL) ? API_SUBPROTOCOL : false),
  });
  let port = options.port;

  const refuse = (response: ServerResponse, status: number, reason: string) => {
    response.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', ...securityHeaders(port) });
    response.end(reason + '\n');
  };

  const server: Server = createServer((request, response) => {
    const url = requestUrl(request, port);
    if (!url) return refuse(response, 400, 'Bad request.');
    if (!isLoopbackHost(request.headers.host, port)) {
      return refuse(response, 403, 'Forbidden: this server only answers to 127.0.0.1 and localhost.');
    }
    if (!mayReadAssets(request, url, port, token)) {
      return refuse(response, 401, 'Unauthorized: open the URL that `homing url` prints (it carries the token).');
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return refuse(response, 405, 'Method not allowed.');
    }
    serveFile(url.pathname, request, response);
  });
  function serveFile(pathname: string, request: IncomingMessage, response: ServerResponse): void {
    let relative: string;
    try {
      relative = decodeURIComponent(pathname);
    } catch {
      return refuse(response, 400, 'Bad path.');
    }
    if (relative.includes('\0')) return refuse(response, 400, 'Bad path.');
    if (relative === '/' || relative === '') relative = '/index.html';
    const file = resolve(join(rendererDir, relative));
    if (file !== rendererDir && !file.startsWith(rendererDir + sep)) return refuse(response, 404, 'Not found.');
    let size: number;
    try {
      const stat = statSync(file);
      if (!stat.isFile()) return refuse(response, 404, 'Not found.');
      size = stat.size;
    } catch {
      if (relative === '/index.html') {
        return refuse(response, 503, 'The window is not built yet: run `npm run build`, then restart the gateway.');
      }
      return refuse(response, 404, 'Not found.');
    }
    const headers: Record<string, string | string[]> = {
      'Content-Type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream',
      'Content-Length': String(size),
      ...securityHeaders(port),
      // Assets requested by the page carry no token in their URL; this cookie vouches
      // for them, and for nothing else (it holds a key derived from the token).
      'Set-Cookie': `${assetCookieName(port)}=${assetKey(token)}; HttpOnly; SameSite=Strict; Path=/`,
    };
    response.writeHead(200, headers);
    if (request.method === 'HEAD') return void response.end();
    const stream = createReadStream(file);
    stream.on('error', (error) => {
      options.logger.warn('could not read a window file', { file: relative, error: error.message });
      response.destroy();
    });
    stream.pipe(response);
  }

  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    // The HTTP server has let go of this socket: a reset from here on would be an
    // unhandled 'error' (and a crash) without this listener.
    socket.on('error', (error) => options.logger.debug('a WebSocket upgrade socket failed', { error: error.message }));
    const reject = (status: string, why: string) => {
      options.logger.warn('refused a WebSocket connection', { why });
      socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    const url = requestUrl(request, port);
    if (!url) return reject('400 Bad Request', 'no URL');
    if (url.pathname !== API_PATH) return reject('404 Not Found', 'unknown path');
    if (!isLoopbackHost(request.headers.host, port)) return reject('403 Forbidden', 'foreign Host');
    if (!isAllowedOrigin(request.headers.origin, port)) return reject('403 Forbidden', 'foreign Origin');
    // Cookies are ignored here on purpose: only an explicit token opens the API.
    if (!tokensEqual(apiTokenFromUpgrade(request, url), token)) return reject('401 Unauthorized', 'bad token');
    if (wss.clients.size >= MAX_CONNECTIONS) return reject('503 Service Unavailable', 'too many connections');
    wss.handleUpgrade(request, socket, head, (ws) => options.api.serve(webSocketPipe(ws, options.logger)));
  });

  await new Promise<void>((resolveListen, rejectListen) => {
    server.once('error', rejectListen);
    server.listen(options.port, HOST, () => {
      server.off('error', rejectListen);
      resolveListen();
    });
  });
  port = (server.address() as AddressInfo).port;
  server.on('error', (error) => options.logger.error('the window server failed', { error }));

  return {
    port,
    token,
    url: `http://${HOST}:${port}/?token=${token}`,
    close: () =>
      new Promise<void>((resolveClose) => {
        for (const client of wss.clients) client.terminate();
        wss.close();
        server.close(() => resolveClose());
        server.closeAllConnections();
      }),
  };
}
