import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { API_SUBPROTOCOL, TOKEN_SUBPROTOCOL_PREFIX } from '../../src/shared/headless-auth';

/**
 * WebSocket by hand, over a plain TCP socket, for sending what no well-behaved
 * client library would: broken frames, half handshakes, resets.
 */

export function rawConnect(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** An upgrade request for /api; `token` undefined sends none. */
export function upgradeRequest(port: number, token: string | undefined, extraHeaders: string[] = []): string {
  return [
    'GET /api HTTP/1.1',
    `Host: 127.0.0.1:${port}`,
    'Upgrade: websocket',
    'Connection: Upgrade',
    `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
    'Sec-WebSocket-Version: 13',
    `Sec-WebSocket-Protocol: ${API_SUBPROTOCOL}${token === undefined ? '' : `, ${TOKEN_SUBPROTOCOL_PREFIX}${token}`}`,
    ...extraHeaders,
    '',
    '',
  ].join('\r\n');
}

export interface RawWebSocket {
  readonly socket: Socket;
  /** The handshake's response head. */
  readonly response: string;
  /** Bytes received after the handshake, as they came. */
  readonly chunks: Buffer[];
  /** The same, joined. */
  received(): Buffer;
  /** Resolves when the server has closed the TCP connection. */
  readonly closed: Promise<void>;
}

/** Completes an authenticated handshake by hand; then frames are the caller's. */
export async function rawWebSocket(port: number, token: string): Promise<RawWebSocket> {
  const socket = await rawConnect(port);
  let buffer = Buffer.alloc(0);
  const onData = (data: Buffer) => (buffer = Buffer.concat([buffer, data]));
  socket.on('data', onData);
  socket.on('error', () => {}); // the server may reset us: that is what is tested
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(upgradeRequest(port, token));
  const start = Date.now();
  while (buffer.indexOf('\r\n\r\n') < 0) {
    if (Date.now() - start > 5_000) throw new Error(`no handshake answer: ${buffer.toString()}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const end = buffer.indexOf('\r\n\r\n') + 4;
  const response = buffer.subarray(0, end).toString();
  if (!response.startsWith('HTTP/1.1 101')) throw new Error(`handshake refused: ${response}`);
  // From here on, chunks are kept as they come (a flood test receives megabytes).
  socket.off('data', onData);
  const chunks: Buffer[] = [buffer.subarray(end)];
  socket.on('data', (data: Buffer) => chunks.push(data));
  return { socket, response, chunks, received: () => Buffer.concat(chunks), closed };
}

export interface FrameOptions {
  readonly opcode?: number;
  readonly fin?: boolean;
  readonly rsv1?: boolean;
  /** Clients must mask; false sends the payload unmasked. */
  readonly mask?: boolean;
  /** Claim this length in the header instead of the payload's. */
  readonly claimedLength?: bigint;
}

/** One WebSocket frame (RFC 6455 §5.2). */
export function frame(payload: Buffer | string, options: FrameOptions = {}): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  const mask = options.mask ?? true;
  const length = options.claimedLength ?? BigInt(body.length);
  const first = (options.fin ?? true ? 0x80 : 0) | (options.rsv1 ? 0x40 : 0) | (options.opcode ?? 0x1);
  let header: Buffer;
  if (length < 126n) header = Buffer.from([first, (mask ? 0x80 : 0) | Number(length)]);
  else if (length < 65536n) {
    header = Buffer.alloc(4);
    header[0] = first;
    header[1] = (mask ? 0x80 : 0) | 126;
    header.writeUInt16BE(Number(length), 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = first;
    header[1] = (mask ? 0x80 : 0) | 127;
    header.writeBigUInt64BE(length, 2);
  }
  if (!mask) return Buffer.concat([header, body]);
  const key = randomBytes(4);
  const masked = Buffer.from(body.map((byte, i) => byte ^ key[i % 4]!));
  return Buffer.concat([header, key, masked]);
}

/** A close frame's payload: a status code, then a reason. */
export function closePayload(code: number, reason = ''): Buffer {
  const payload = Buffer.alloc(2 + Buffer.byteLength(reason));
  payload.writeUInt16BE(code, 0);
  payload.write(reason, 2);
  return payload;
}

/** The text of each complete server frame (servers never mask) in `data`. */
export function textFrames(data: Buffer): string[] {
  const texts: string[] = [];
  let at = 0;
  while (at + 2 <= data.length) {
    let length = data[at + 1]! & 0x7f;
    let start = at + 2;
    if (length === 126) {
      if (start + 2 > data.length) break;
      length = data.readUInt16BE(start);
      start += 2;
    } else if (length === 127) {
      if (start + 8 > data.length) break;
      length = Number(data.readBigUInt64BE(start));
      start += 8;
    }
    if (start + length > data.length) break;
    if ((data[at]! & 0x0f) === 0x1) texts.push(data.subarray(start, start + length).toString());
    at = start + length;
  }
  return texts;
}
