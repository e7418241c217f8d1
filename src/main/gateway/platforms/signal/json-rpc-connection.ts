import { connect, type Socket } from 'node:net';
import type { Logger } from '../../logger';
import type { DaemonAddress } from './daemon-address';

/**
 * One connection to the signal-cli daemon: JSON-RPC 2.0, one JSON object per
 * line each way (man signal-cli-jsonrpc(5), "Basic usage": "Every request must
 * be a JSON object in a single line"; JsonRpcReader reads line by line and
 * answers each request on its own thread, so a long `receive` does not hold up
 * a `send` on the same connection).
 *
 * The daemon is trusted no more than any server: a line longer than
 * `maxLineBytes` is dropped up to its end, a line that is not JSON, or not an
 * object, is logged and skipped, and a socket error closes the connection
 * instead of throwing. One call may allow a longer answer (`maxAnswerBytes`:
 * `getAttachment`'s base64): while it waits, lines up to its allowance are
 * read, and a line longer than `maxLineBytes` is taken only if it is that
 * call's answer (its `id`, which signal-cli writes last: JsonRpcResponse's
 * field order); every other line, and notifications, keep the usual bound.
 */

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: unknown,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

/** The connection closed (or never opened) before the answer came: a send may or may not have gone out. */
export class RpcClosedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RpcClosedError';
  }
}

/** An answer longer than its call allows: it was dropped unread. */
export class RpcAnswerTooLongError extends Error {
  constructor(readonly limitBytes: number) {
    super(`signal-cli's answer was longer than ${limitBytes} bytes`);
    this.name = 'RpcAnswerTooLongError';
  }
}

/** How one call may differ from the usual. */
export interface RpcCallOptions {
  /** The longest answer line taken for this call (default: the connection's `maxLineBytes`). */
  readonly maxAnswerBytes?: number;
  /** Stops waiting: the call fails with RpcClosedError (a late answer is ignored). */
  readonly signal?: AbortSignal;
}

export interface RpcConnectionOptions {
  readonly logger: Logger;
  /** Called for every notification (a request without an id): `receive` in automatic mode. */
  readonly onNotification?: (method: string, params: unknown) => void;
  /** Called once when the connection ends, with the reason in words. */
  readonly onClose?: (reason: string) => void;
  /** Longest line taken (default 4 MiB: a received long text and its metadata fit many times). */
  readonly maxLineBytes?: number;
  /** How long a connection attempt may take (default 10 s). */
  readonly connectTimeoutMs?: number;
}

interface Pending {
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly timer: ReturnType<typeof setTimeout> | undefined;
  /** Set when this call allows an answer longer than the usual line. */
  readonly maxAnswerBytes: number | undefined;
  readonly unlisten: () => void;
}

const DEFAULT_MAX_LINE = 4 * 1024 * 1024;
/** How much of a dropped line's end is kept to read its `id` (`,"id":123}` and room). */
const TAIL_BYTES = 64;

export class RpcConnection {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private buffer: Buffer[] = [];
  private buffered = 0;
  /** Inside a line that is too long: everything up to its newline is dropped. */
  private skipping = false;
  /** The last bytes of the line being dropped: its `id`, to fail the call it answered. */
  private tail = Buffer.alloc(0);
  private closed = false;

  private constructor(
    private readonly socket: Socket,
    private readonly options: RpcConnectionOptions,
  ) {
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (error) => this.close(`the connection to signal-cli failed: ${describeSocketError(error)}`));
    socket.on('close', () => this.close('signal-cli closed the connection'));
  }

  /** Opens a connection; rejects in words when nothing listens there. */
  static open(address: DaemonAddress, options: RpcConnectionOptions): Promise<RpcConnection> {
    return new Promise((resolve, reject) => {
      const socket = address.kind === 'tcp' ? connect({ host: address.host, port: address.port }) : connect({ path: address.path });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new RpcClosedError(`no answer from signal-cli within ${Math.round((options.connectTimeoutMs ?? 10_000) / 1000)} s`));
      }, options.connectTimeoutMs ?? 10_000);
      const failed = (error: Error) => {
        clearTimeout(timer);
        socket.destroy();
        reject(new RpcClosedError(describeSocketError(error)));
      };
      socket.once('error', failed);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.off('error', failed);
        socket.setNoDelay(true);
        resolve(new RpcConnection(socket, options));
      });
    });
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** Calls `method`; resolves with its `result`, rejects with an RpcError (the daemon's error), RpcClosedError or RpcAnswerTooLongError. */
  call(method: string, params?: Record<string, unknown>, timeoutMs = 60_000, options: RpcCallOptions = {}): Promise<unknown> {
    if (this.closed) return Promise.reject(new RpcClosedError('not connected to signal-cli'));
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(new RpcClosedError(`${method} was stopped`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const fail = (error: Error) => {
        const pending = this.pending.get(id);
        if (!pending) return;
        this.pending.delete(id);
        clearTimeout(pending.timer);
        pending.unlisten();
        reject(error);
      };
      const timer = timeoutMs > 0 ? setTimeout(() => fail(new RpcClosedError(`signal-cli did not answer ${method} within ${Math.round(timeoutMs / 1000)} s`)), timeoutMs) : undefined;
      const onAbort = () => fail(new RpcClosedError(`${method} was stopped`));
      signal?.addEventListener('abort', onAbort, { once: true });
      const unlisten = () => signal?.removeEventListener('abort', onAbort);
      const maxAnswerBytes = options.maxAnswerBytes !== undefined && options.maxAnswerBytes > this.maxLine ? options.maxAnswerBytes : undefined;
      this.pending.set(id, { resolve, reject: fail, timer, maxAnswerBytes, unlisten });
      this.socket.write(`${JSON.stringify({ jsonrpc: '2.0', method, id, ...(params ? { params } : {}) })}\n`);
    });
  }

  /** Ends the connection; every call still waiting fails with RpcClosedError. */
  close(reason = 'closed by Homing'): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.destroy();
    for (const pending of [...this.pending.values()]) pending.reject(new RpcClosedError(reason));
    this.buffer = [];
    this.buffered = 0;
    this.options.onClose?.(reason);
  }

  private get maxLine(): number {
    return this.options.maxLineBytes ?? DEFAULT_MAX_LINE;
  }

  /** The longest line read now: the usual bound, or the largest allowance of a call still waiting. */
  private lineLimit(): number {
    let limit = this.maxLine;
    for (const pending of this.pending.values()) if (pending.maxAnswerBytes !== undefined && pending.maxAnswerBytes > limit) limit = pending.maxAnswerBytes;
    return limit;
  }

  private onData(chunk: Buffer): void {
    let start = 0;
    for (let newline = chunk.indexOf(10, start); newline !== -1; newline = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, newline);
      start = newline + 1;
      if (this.skipping) {
        this.skipping = false;
        this.endLongLine(piece);
        continue;
      }
      const limit = this.lineLimit();
      if (this.buffered + piece.length > limit) {
        this.dropLongLine(limit);
        this.endLongLine(piece);
        continue;
      }
      const line = this.buffer.length === 0 ? piece : Buffer.concat([...this.buffer, piece]);
      this.buffer = [];
      this.buffered = 0;
      if (line.length > this.maxLine && !this.allowedLong(line)) continue;
      this.onLine(line.toString('utf8'));
      if (this.closed) return;
    }
    const rest = chunk.subarray(start);
    if (rest.length === 0) return;
    if (this.skipping) {
      this.keepTail(rest);
      return;
    }
    const limit = this.lineLimit();
    if (this.buffered + rest.length > limit) {
      this.dropLongLine(limit);
      this.keepTail(rest);
      this.skipping = true;
      return;
    }
    this.buffer.push(Buffer.from(rest));
    this.buffered += rest.length;
  }

  private dropLongLine(max: number): void {
    this.buffer = [];
    this.buffered = 0;
    this.tail = Buffer.alloc(0);
    this.options.logger.warn('signal: skipped a line from signal-cli longer than the limit', { maxBytes: max });
  }

  private keepTail(bytes: Buffer): void {
    this.tail = Buffer.from(Buffer.concat([this.tail, bytes.subarray(-TAIL_BYTES)]).subarray(-TAIL_BYTES));
  }

  /** A dropped line ended: the call it answered (its `id` at the end) fails now instead of waiting for its timeout. */
  private endLongLine(last: Buffer): void {
    this.keepTail(last);
    const id = answerIdOf(this.tail);
    this.tail = Buffer.alloc(0);
    if (id === undefined) return;
    const pending = this.pending.get(id);
    pending?.reject(new RpcAnswerTooLongError(pending.maxAnswerBytes ?? this.maxLine));
  }

  /** A line over the usual bound is read only as the answer of the call that allowed it. */
  private allowedLong(line: Buffer): boolean {
    const id = answerIdOf(line.subarray(-TAIL_BYTES));
    const pending = id === undefined ? undefined : this.pending.get(id);
    if (pending?.maxAnswerBytes !== undefined && line.length <= pending.maxAnswerBytes) return true;
    this.options.logger.warn('signal: skipped a line from signal-cli longer than the limit', { maxBytes: this.maxLine });
    pending?.reject(new RpcAnswerTooLongError(this.maxLine));
    return false;
  }

  private onLine(line: string): void {
    if (line.trim() === '') return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      this.options.logger.warn('signal: skipped a line from signal-cli that is not JSON', { bytes: line.length });
      return;
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      this.options.logger.warn('signal: skipped a line from signal-cli that is not a JSON-RPC object');
      return;
    }
    const { id, method, params, result, error } = message as { id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: unknown };
    if (typeof method === 'string') {
      // A request from the daemon: only notifications (no id) are expected.
      if (id === undefined || id === null) this.options.onNotification?.(method, params);
      return;
    }
    if (typeof id !== 'number') {
      if (error !== undefined) this.options.logger.warn('signal: signal-cli answered a request it could not read', { error: errorWords(error) });
      return;
    }
    const pending = this.pending.get(id);
    if (!pending) return;
    if (error !== undefined && error !== null) {
      const shape = typeof error === 'object' ? (error as { code?: unknown; message?: unknown; data?: unknown }) : {};
      // `reject` settles the call: it leaves the waiting list, its timer and abort listener go.
      pending.reject(new RpcError(typeof shape.code === 'number' ? shape.code : 0, typeof shape.message === 'string' ? shape.message.slice(0, 1_000) : 'an error without words', shape.data));
      return;
    }
    this.pending.delete(id);
    clearTimeout(pending.timer);
    pending.unlisten();
    pending.resolve(result);
  }
}

/** The `id` a JSON-RPC answer ends with (`…,"id":12}`), read from the line's last bytes. */
function answerIdOf(end: Buffer): number | undefined {
  const match = /"id"\s*:\s*(\d{1,15})\s*\}\s*$/.exec(end.toString('latin1'));
  return match ? Number(match[1]) : undefined;
}

function errorWords(error: unknown): string {
  const words = typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : undefined;
  return typeof words === 'string' ? words.slice(0, 200) : 'an error without words';
}

/** A socket error in words: nothing listening, no such socket file, no permission. */
export function describeSocketError(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'nothing listens there (is the signal-cli daemon running?)';
    case 'ENOENT':
      return 'no such socket file (is the signal-cli daemon running with --socket?)';
    case 'EACCES':
      return 'no permission to open the socket';
    case 'ECONNRESET':
    case 'EPIPE':
      return 'the connection was cut';
    default:
      return code ? `${code}: ${error.message}` : error.message;
  }
}
