import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket as WsClient, WebSocketServer, type WebSocket } from 'ws';
import { rawWebSocket, type RawWebSocket } from '../../../test/support/raw-websocket';
import type { Logger } from '../gateway/logger';
import { MAX_MEDIA_SHOWN_BYTES } from '../gateway/media/api-handlers';
import { SEND_BUFFER_LIMITS, webSocketPipe } from './websocket-pipe';

const LIMITS = { pauseAbove: 64 << 10, resumeBelow: 16 << 10, dropAbove: 1 << 20 };

function recordingLogger(lines: string[]): Logger {
  const log = (message: string) => void lines.push(message);
  return { debug: log, info: log, warn: log, error: log };
}

describe('the WebSocket pipe with a client that stops reading (real ws server, raw TCP client)', () => {
  let wss: WebSocketServer;
  let serverSide: Promise<WebSocket>;
  let client: RawWebSocket;
  const lines: string[] = [];

  beforeEach(async () => {
    lines.length = 0;
    wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    serverSide = new Promise((resolve) => wss.once('connection', resolve));
    await new Promise((resolve) => wss.once('listening', resolve));
    client = await rawWebSocket((wss.address() as AddressInfo).port, 'unused');
    client.socket.pause();
  });

  afterEach(async () => {
    client.socket.destroy();
    await new Promise((resolve) => wss.close(resolve));
  });

  /** Sends 32 KiB messages until `until` holds (or 16 MiB went out). */
  async function flood(ws: WebSocket, until: () => boolean): Promise<void> {
    const pipe = webSocketPipe(ws, recordingLogger(lines), LIMITS);
    const big = { event: { type: 'x', text: 'y'.repeat(32 << 10) } };
    for (let i = 0; i < 512 && !until(); i++) {
      pipe.send(big);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  it('stops reading the client once its unread answers pass the mark, and reads again once it catches up', async () => {
    const ws = await serverSide;
    await flood(ws, () => ws.isPaused);
    expect(ws.isPaused).toBe(true);
    expect(lines).toContain('stopped reading a WebSocket client: its answers are piling up unread');
    client.chunks.length = 0;
    client.socket.on('data', () => (client.chunks.length = 0));
    client.socket.resume();
    await expect.poll(() => ws.isPaused, { timeout: 5_000 }).toBe(false);
    expect(lines).toContain('reading a WebSocket client again: it caught up with its answers');
  });

  it('closes the connection when unread messages pass the hard limit, instead of buffering on', async () => {
    const ws = await serverSide;
    await flood(ws, () => ws.readyState !== ws.OPEN);
    expect(ws.readyState).not.toBe(ws.OPEN);
    expect(lines).toContain('closed a WebSocket whose client stopped reading');
    expect(ws.bufferedAmount).toBeLessThanOrEqual(LIMITS.dropAbove + (64 << 10));
  });
});

describe('the WebSocket pipe with the real limits', () => {
  it('hands the window the largest file getMedia answers, in one message, without closing the connection', async () => {
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise((resolve) => wss.once('listening', resolve));
    const serverSide = new Promise<WebSocket>((resolve) => wss.once('connection', resolve));
    const client = new WsClient(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`, { maxPayload: 64 << 20 });
    try {
      const received = new Promise<string>((resolve) => client.once('message', (data) => resolve(data.toString())));
      const lines: string[] = [];
      const pipe = webSocketPipe(await serverSide, recordingLogger(lines), SEND_BUFFER_LIMITS);
      // What getMedia answers for a file of the largest size it hands over (media/api-handlers.ts).
      const dataBase64 = Buffer.alloc(MAX_MEDIA_SHOWN_BYTES, 7).toString('base64');
      pipe.send({ id: 1, ok: true, value: { mime: 'application/pdf', size: MAX_MEDIA_SHOWN_BYTES, name: null, inline: false, dataBase64 } });
      const answer = JSON.parse(await received) as { value: { dataBase64: string } };
      expect(answer.value.dataBase64.length).toBe(dataBase64.length);
      expect(lines).not.toContain('closed a WebSocket whose client stopped reading');
    } finally {
      client.close();
      await new Promise((resolve) => wss.close(resolve));
    }
  });
});
