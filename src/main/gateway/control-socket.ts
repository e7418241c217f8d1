import { createHash } from 'node:crypto';
import { chmodSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApiError } from '../../shared/api';
import type { Logger } from './logger';

/**
 * The running gateway's door for `homing` commands that change the ledger
 * (`deliveries retry|discard`, `sweep`): with one gateway per data directory,
 * those go through it rather than writing behind its back. A Unix socket (a
 * named pipe on Windows) private to the user: inside the 0700 data directory,
 * itself 0600, so only the user who could open homing.db can connect. It
 * speaks one JSON request per line and answers with the API's result values;
 * only the methods below are served.
 */
export const CONTROL_METHODS = [
  'getStatus',
  'retryDelivery',
  'discardDelivery',
  'retryDeliveries',
  'sweepNow',
  'listPairing',
  'decidePairing',
  'listSchedules',
  'addSchedule',
  'updateSchedule',
  'removeSchedule',
  'runScheduleNow',
] as const;
export type ControlMethod = (typeof CONTROL_METHODS)[number];

/** A request line longer than this closes the connection. */
const MAX_LINE_BYTES = 64 * 1024;
/** Unix socket paths are limited to about 104 bytes (macOS) / 108 (Linux). */
const MAX_SOCKET_PATH = 100;

type Result = { ok: true; value: unknown } | { ok: false; error: ApiError };

export function controlSocketPath(dataDir: string, platform: NodeJS.Platform = process.platform): string {
  const tag = createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
  if (platform === 'win32') return `\\\\.\\pipe\\homing-${tag}`;
  const inside = join(dataDir, 'gateway.sock');
  if (Buffer.byteLength(inside) <= MAX_SOCKET_PATH) return inside;
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  return join(tmpdir(), `homing-${uid}-${tag}.sock`);
}

export interface ControlSocket {
  readonly path: string;
  close(): Promise<void>;
}

/** Listens on the control socket; `dispatch` is the API server's. The caller holds the data directory's lock. */
export async function serveControlSocket(
  path: string,
  dispatch: (method: string, params: unknown) => Promise<Result>,
  logger: Logger,
): Promise<ControlSocket> {
  // The lock is ours, so a socket file left here belongs to a gateway that died.
  if (!path.startsWith('\\\\')) rmSync(path, { force: true });
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => socket.destroy());
    socket.on('close', () => sockets.delete(socket));
    let buffered = '';
    socket.setEncoding('utf8');
    socket.on('data', (text: string) => {
      buffered += text;
      if (Buffer.byteLength(buffered) > MAX_LINE_BYTES) {
        socket.destroy();
        return;
      }
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        void answer(line).then((reply) => {
          if (!socket.destroyed) socket.write(JSON.stringify(reply) + '\n');
        });
      }
    });
  });
  server.on('error', (error) => logger.warn('the control socket failed', { error }));

  const answer = async (line: string): Promise<Record<string, unknown>> => {
    let request: { id?: unknown; method?: unknown; params?: unknown };
    try {
      request = JSON.parse(line) as typeof request;
    } catch {
      return { id: null, ok: false, error: { code: 'bad-request', message: 'not JSON' } };
    }
    const id = typeof request.id === 'number' || typeof request.id === 'string' ? request.id : null;
    if (typeof request.method !== 'string' || !(CONTROL_METHODS as readonly string[]).includes(request.method)) {
      return { id, ok: false, error: { code: 'unknown-method', message: `not served here: ${String(request.method)}` } };
    }
    return { id, ...(await dispatch(request.method, request.params)) };
  };

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  if (!path.startsWith('\\\\')) chmodSync(path, 0o600);
  return {
    path,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => {
          if (!path.startsWith('\\\\')) rmSync(path, { force: true });
          resolve();
        });
      }),
  };
}

/** Calls the running gateway through its control socket; rejects when it cannot be reached. */
export function callControlSocket(path: string, method: ControlMethod, params: unknown, timeoutMs = 10_000): Promise<Result> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    let buffered = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('the running gateway did not answer in time'));
    }, timeoutMs);
    socket.setEncoding('utf8');
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('data', (text: string) => {
      buffered += text;
      if (Buffer.byteLength(buffered) > 16 * MAX_LINE_BYTES) socket.destroy(new Error('the answer is too long'));
      const newline = buffered.indexOf('\n');
      if (newline < 0) return;
      clearTimeout(timer);
      socket.end();
      try {
        const reply = JSON.parse(buffered.slice(0, newline)) as Result;
        resolve(reply);
      } catch {
        reject(new Error('the running gateway answered something unreadable'));
      }
    });
    socket.on('connect', () => socket.write(JSON.stringify({ id: 1, method, params }) + '\n'));
  });
}
