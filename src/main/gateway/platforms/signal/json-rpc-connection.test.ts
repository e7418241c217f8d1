import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../logger';
import { RpcAnswerTooLongError, RpcClosedError, RpcConnection, RpcError } from './json-rpc-connection';

function recordingLogger(): Logger & { readonly lines: string[] } {
  const lines: string[] = [];
  const record = (level: string) => (message: string) => void lines.push(`${level} ${message}`);
  return { lines, debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') };
}

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A daemon that answers each request with what `reply` writes. */
async function daemon(reply: (socket: Socket, request: { id: number; method: string }) => void): Promise<number> {
  server = createServer((socket) => {
    socket.on('error', () => undefined);
    let buffer = '';
    socket.on('data', (chunk) => {
      buffer += chunk.toString();
      for (let i = buffer.indexOf('\n'); i !== -1; i = buffer.indexOf('\n')) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 1);
        reply(socket, JSON.parse(line) as { id: number; method: string });
      }
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return (server!.address() as { port: number }).port;
}

describe('the JSON-RPC line connection to signal-cli', () => {
  it('skips hostile lines (not JSON, not an object, too long, answers to nothing) and still answers the call', async () => {
    const port = await daemon((socket, request) => {
      socket.write('this is not json\n[1,2]\n{"id":999,"result":1}\n');
      socket.write(`${'x'.repeat(3000)}`);
      socket.write(`${'y'.repeat(3000)}\n`);
      socket.write(`{"jsonrpc":"2.0","result":{"version":"0.13.22"},`);
      socket.write(`"id":${request.id}}\n`);
    });
    const logger = recordingLogger();
    const connection = await RpcConnection.open({ kind: 'tcp', host: '127.0.0.1', port }, { logger, maxLineBytes: 4096 });
    await expect(connection.call('version')).resolves.toEqual({ version: '0.13.22' });
    expect(logger.lines).toEqual([
      'warn signal: skipped a line from signal-cli that is not JSON',
      'warn signal: skipped a line from signal-cli that is not a JSON-RPC object',
      'warn signal: skipped a line from signal-cli longer than the limit',
    ]);
    connection.close();
  });

  it('turns the daemon’s error into an RpcError with its code, and hands notifications on', async () => {
    const port = await daemon((socket, request) => {
      socket.write(`{"jsonrpc":"2.0","method":"receive","params":{"envelope":{}}}\n`);
      socket.write(`${JSON.stringify({ jsonrpc: '2.0', error: { code: -5, message: 'Failed to send message due to rate limiting', data: { response: {} } }, id: request.id })}\n`);
    });
    const notified: string[] = [];
    const connection = await RpcConnection.open({ kind: 'tcp', host: '127.0.0.1', port }, { logger: recordingLogger(), onNotification: (method) => notified.push(method) });
    const error = await connection.call('send', {}).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RpcError);
    expect((error as RpcError).code).toBe(-5);
    expect(notified).toEqual(['receive']);
    connection.close();
  });

  it('takes a longer answer only for the call that allows it, and keeps the usual bound for every other line meanwhile', async () => {
    const big = 'A'.repeat(20_000);
    const port = await daemon((socket, request) => {
      if (request.method !== 'getAttachment') return;
      // While the big call waits: a long notification and a long answer to another id, both over the usual bound.
      socket.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'receive', params: { pad: big } })}\n`);
      socket.write(`${JSON.stringify({ jsonrpc: '2.0', result: { pad: big }, id: 999 })}\n`);
      socket.write(`${JSON.stringify({ jsonrpc: '2.0', result: { data: big }, id: request.id })}\n`);
    });
    const logger = recordingLogger();
    const notified: string[] = [];
    const connection = await RpcConnection.open({ kind: 'tcp', host: '127.0.0.1', port }, { logger, maxLineBytes: 4096, onNotification: (method) => notified.push(method) });
    await expect(connection.call('getAttachment', {}, 10_000, { maxAnswerBytes: 30_000 })).resolves.toEqual({ data: big });
    expect(notified).toEqual([]);
    expect(logger.lines).toEqual(['warn signal: skipped a line from signal-cli longer than the limit', 'warn signal: skipped a line from signal-cli longer than the limit']);
    connection.close();
  });

  it('fails a call at once when its answer is longer than it allows, and stops waiting when its signal aborts', async () => {
    const port = await daemon((socket, request) => {
      if (request.method === 'getAttachment') socket.write(`${JSON.stringify({ jsonrpc: '2.0', result: { data: 'B'.repeat(50_000) }, id: request.id })}\n`);
      if (request.method === 'version') socket.write(`${JSON.stringify({ jsonrpc: '2.0', result: { version: '0.13.22' }, id: request.id })}\n`);
    });
    const connection = await RpcConnection.open({ kind: 'tcp', host: '127.0.0.1', port }, { logger: recordingLogger(), maxLineBytes: 4096 });
    const started = Date.now();
    const error = await connection.call('getAttachment', {}, 30_000, { maxAnswerBytes: 10_000 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RpcAnswerTooLongError);
    expect(Date.now() - started).toBeLessThan(5_000);
    // The connection reads on after the dropped line.
    await expect(connection.call('version')).resolves.toEqual({ version: '0.13.22' });
    const stop = new AbortController();
    const waiting = connection.call('hang', {}, 30_000, { signal: stop.signal }).catch((caught: unknown) => caught);
    stop.abort();
    expect(await waiting).toMatchObject({ name: 'RpcClosedError', message: 'hang was stopped' });
    await expect(connection.call('x', {}, 1_000, { signal: stop.signal })).rejects.toBeInstanceOf(RpcClosedError);
    connection.close();
  });

  it('fails every waiting call when the daemon goes away, and says when nothing listens', async () => {
    const port = await daemon((socket) => socket.destroy());
    const closed: string[] = [];
    const connection = await RpcConnection.open({ kind: 'tcp', host: '127.0.0.1', port }, { logger: recordingLogger(), onClose: (reason) => closed.push(reason) });
    await expect(connection.call('receive')).rejects.toBeInstanceOf(RpcClosedError);
    expect(closed).toHaveLength(1);
    server!.close();
    server = undefined;
    await expect(RpcConnection.open({ kind: 'tcp', host: '127.0.0.1', port }, { logger: recordingLogger() })).rejects.toThrow(/nothing listens there/);
  });
});
