import { createReadStream, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { extname, join, resolve, sep } from 'node:path';
import { WebSocketServer, type WebSocket } from 'ws';
import type { MessagePipe } from '../../shared/protocol';
import type { ApiServer } from '../gateway/api/server';
import type { Logger } from '../gateway/logger';
import { contentSecurityPolicy } from '../security';
import {
  cookieName,
  createAccessToken,
  isAllowedOrigin,
  isLoopbackHost,
  tokenFromRequest,
  tokensEqual,
} from './access';

export const API_PATH = '/api';
const HOST = '127.0.0.1';
/** Largest protocol message accepted from a browser. */
const MAX_MESSAGE_BYTES = 1 << 20;

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
    // The token rides in the URL: never send it on as a Referer.
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
  };
}

/** Serves the window and the API on 127.0.0.1, behind the access token. */
export async function startHeadlessServer(options: HeadlessServerOptions): Promise<HeadlessServer> {
  const token = options.token ?? createAccessToken();
  const rendererDir = resolve(options.rendererDir);
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  let port = options.port;

  const refuse = (response: ServerResponse, status: number, reason: string) => {
    response.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', ...securityHeaders(port) });
    response.end(reason + '\n');
  };

  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', `http://${HOST}:${port}`);
    if (!isLoopbackHost(request.headers.host, port)) {
      return refuse(response, 403, 'Forbidden: this server only answers to 127.0.0.1 and localhost.');
    }
    if (!tokensEqual(tokenFromRequest(request, url, port), token)) {
      return refuse(response, 401, 'Unauthorized: open the URL that `homing gateway` printed (it carries the token).');
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
    };
    // Assets requested by the page carry no token in their URL; the cookie vouches for them.
    headers['Set-Cookie'] = `${cookieName(port)}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`;
    response.writeHead(200, headers);
    if (request.method === 'HEAD') return void response.end();
    createReadStream(file).pipe(response);
  }

  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(request.url ?? '/', `http://${HOST}:${port}`);
    const reject = (status: string, why: string) => {
      options.logger.warn('refused a WebSocket connection', { why });
      socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    if (url.pathname !== API_PATH) return reject('404 Not Found', 'unknown path');
    if (!isLoopbackHost(request.headers.host, port)) return reject('403 Forbidden', 'foreign Host');
    if (!isAllowedOrigin(request.headers.origin, port)) return reject('403 Forbidden', 'foreign Origin');
    if (!tokensEqual(tokenFromRequest(request, url, port), token)) return reject('401 Unauthorized', 'bad token');
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

/** The protocol over a WebSocket: JSON text frames. */
export function webSocketPipe(ws: WebSocket, logger: Logger): MessagePipe {
  return {
    send(message) {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
    },
    onMessage(listener) {
      ws.on('message', (data, isBinary) => {
        if (isBinary) return logger.warn('ignored a binary WebSocket frame');
        let message: unknown;
        try {
          message = JSON.parse(data.toString());
        } catch {
          return logger.warn('ignored a WebSocket frame that is not JSON');
        }
        listener(message);
      });
    },
    onClose(listener) {
      ws.on('close', listener);
    },
    close() {
      ws.close();
    },
  };
}
