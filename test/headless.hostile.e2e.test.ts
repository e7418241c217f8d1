import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { API_SUBPROTOCOL, TOKEN_SUBPROTOCOL_PREFIX } from '../src/shared/headless-auth';
import { connectApi } from './support/api-socket';
import { residentBytes } from './support/process-memory';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { closePayload, frame, rawConnect, rawWebSocket, textFrames, upgradeRequest } from './support/raw-websocket';
import { waitUntil } from './support/wait';

/**
 * Hostile input against a real `homing gateway` process: after each attack the
 * same process must still be running and answer an API call.
 */

function httpGet(port: number, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; body: string; headers: Record<string, unknown> }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Sends raw bytes on a fresh TCP connection; resolves with what came back before the server closed it. */
async function rawExchange(port: number, bytes: string): Promise<string> {
  const socket = await rawConnect(port);
  let answer = '';
  socket.on('data', (data: Buffer) => (answer += data.toString()));
  socket.on('error', () => {});
  socket.write(bytes);
  await new Promise<void>((resolve) => {
    socket.once('close', () => resolve());
    setTimeout(() => {
      socket.destroy();
      resolve();
    }, 3_000);
  });
  return answer;
}

function tryWebSocket(url: string, options: WebSocket.ClientOptions = {}, protocols: string[] = []) {
  return new Promise<{ accepted: true; socket: WebSocket } | { accepted: false; status: number }>((resolve) => {
    const socket = new WebSocket(url, protocols, options);
    socket.once('open', () => resolve({ accepted: true, socket }));
    socket.once('unexpected-response', (_req, res) => resolve({ accepted: false, status: res.statusCode ?? 0 }));
    socket.once('error', () => resolve({ accepted: false, status: 0 }));
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms))]);
}

describe('the headless gateway under hostile input (a real `homing gateway` process)', () => {
  let dataDir: string;
  let gateway: RunningGateway;

  /** The gateway is the same process, and it still answers the API. */
  async function expectAlive(): Promise<void> {
    expect(gateway.child.exitCode).toBeNull();
    const api = await connectApi(gateway);
    try {
      expect(await api.call('getStatus')).toMatchObject({ state: 'running', pid: gateway.child.pid });
    } finally {
      api.close();
    }
  }

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-hostile-'));
    gateway = await startHeadlessGateway(['--data-dir', dataDir]);
  });

  afterAll(async () => {
    await gateway?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describe('without the token', () => {
    it('survives a cookie that is not URL-encoded (decodeURIComponent would throw)', async () => {
      for (const name of [`homing_token_${gateway.port}`, `homing_assets_${gateway.port}`]) {
        expect((await httpGet(gateway.port, '/', { Cookie: `${name}=%` })).status).toBe(401);
        expect((await httpGet(gateway.port, '/assets/x.js', { Cookie: `a=b; ${name}=%E0%A4%A` })).status).toBe(401);
        expect(await tryWebSocket(`ws://127.0.0.1:${gateway.port}/api`, { headers: { Cookie: `${name}=%` } })).toEqual({
          accepted: false,
          status: 401,
        });
      }
      await expectAlive();
    });

    it('survives request targets that are no URL (`//`, `http://[`), over HTTP and as an upgrade', async () => {
      for (const target of ['//', '///', 'http://[', '//:99999']) {
        const answer = await rawExchange(gateway.port, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${gateway.port}\r\nConnection: close\r\n\r\n`);
        expect(answer).toMatch(/^HTTP\/1\.1 400/);
        const upgrade = upgradeRequest(gateway.port, gateway.token).replace('GET /api ', `GET ${target} `);
        expect(await rawExchange(gateway.port, upgrade)).toMatch(/^HTTP\/1\.1 400/);
      }
      await expectAlive();
    });

    it('survives hundreds of refused WebSocket upgrades followed by a TCP reset', async () => {
      for (let batch = 0; batch < 6; batch++) {
        await Promise.all(
          Array.from({ length: 50 }, async (_, i) => {
            const socket = await rawConnect(gateway.port);
            socket.on('error', () => {});
            socket.write(upgradeRequest(gateway.port, i % 2 ? undefined : 'wrong'));
            // Half reset at once, half once the refusal is on its way.
            if (i % 3) await new Promise((resolve) => setTimeout(resolve, 1));
            socket.resetAndDestroy();
          }),
        );
      }
      await expectAlive();
      // Whoever reaches the port decides how often a refusal happens, not how much is logged: a few lines a minute, the rest counted.
      const refusals = gateway.output().split('\n').filter((line) => line.includes('refused a WebSocket connection') && !line.includes('more like this'));
      expect(refusals.length).toBeGreaterThan(0);
      expect(refusals.length).toBeLessThanOrEqual(10);
    });
  });

  describe('the token', () => {
    it('opens the API as a subprotocol; the server answers with the API protocol, never the token', async () => {
      const result = await tryWebSocket(`ws://127.0.0.1:${gateway.port}/api`, { origin: `http://127.0.0.1:${gateway.port}` }, [
        API_SUBPROTOCOL,
        TOKEN_SUBPROTOCOL_PREFIX + gateway.token,
      ]);
      if (!result.accepted) throw new Error(`refused with ${result.status}`);
      expect(result.socket.protocol).toBe(API_SUBPROTOCOL);
      result.socket.close();
      const api = await connectApi(gateway, 'subprotocol');
      expect(await api.call('getStatus')).toMatchObject({ state: 'running' });
      api.close();
    });

    it('opens the API in the upgrade URL', async () => {
      const api = await connectApi(gateway, 'query');
      expect(await api.call('getStatus')).toMatchObject({ state: 'running' });
      api.close();
    });

    it('refuses a wrong token as a subprotocol', async () => {
      expect(
        await tryWebSocket(`ws://127.0.0.1:${gateway.port}/api`, {}, [API_SUBPROTOCOL, `${TOKEN_SUBPROTOCOL_PREFIX}${'A'.repeat(43)}`]),
      ).toEqual({ accepted: false, status: 401 });
    });

    it('sets a cookie that holds no token and unlocks the window files only, never the API', async () => {
      const page = await httpGet(gateway.port, `/?token=${gateway.token}`);
      const setCookie = String(page.headers['set-cookie']);
      expect(setCookie).toMatch(new RegExp(`^homing_assets_${gateway.port}=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=/$`));
      expect(setCookie).not.toContain(gateway.token);
      const cookie = setCookie.split(';')[0]!;
      // A reload once the token has left the address bar: the cookie serves the page…
      expect((await httpGet(gateway.port, '/', { Cookie: cookie })).status).toBe(200);
      // …but the API wants the token itself, whatever cookie comes along.
      for (const cookies of [cookie, `homing_token_${gateway.port}=${gateway.token}`, `${cookie}; homing_token_${gateway.port}=${gateway.token}`]) {
        expect(
          await tryWebSocket(`ws://127.0.0.1:${gateway.port}/api`, { origin: `http://127.0.0.1:${gateway.port}`, headers: { Cookie: cookies } }, [
            API_SUBPROTOCOL,
          ]),
        ).toEqual({ accepted: false, status: 401 });
      }
    });
  });

  describe('malformed WebSocket frames close that connection only', () => {
    const cases: [string, () => Buffer][] = [
      ['text that is not UTF-8', () => frame(Buffer.from([0x7b, 0xff, 0xfe, 0xc3]))],
      ['an unmasked client frame', () => frame('{"id":1,"method":"getStatus"}', { mask: false })],
      ['a reserved opcode', () => frame('x', { opcode: 0x3 })],
      ['RSV1 without a negotiated extension', () => frame('{"id":1,"method":"getStatus"}', { rsv1: true })],
      ['a close frame with an invalid code', () => frame(closePayload(999), { opcode: 0x8 })],
      ['a close frame with code 1005 (never on the wire)', () => frame(closePayload(1005), { opcode: 0x8 })],
      ['a fragmented ping', () => frame('x', { opcode: 0x9, fin: false })],
      ['a continuation with nothing to continue', () => frame('x', { opcode: 0x0 })],
      ['a length header of 1 TiB (over the limit)', () => frame('', { claimedLength: 1n << 40n })],
      ['a length header of 2^63', () => frame('', { claimedLength: (1n << 63n) + 5n })],
    ];
    it.each(cases)('%s', async (_name, make) => {
      const raw = await rawWebSocket(gateway.port, gateway.token);
      raw.socket.write(make());
      await withTimeout(raw.closed, 5_000, 'the server closing the connection');
      await expectAlive();
    });

    it('closes the connection on a message over 1 MiB (maxPayload) with 1009', async () => {
      const api = await tryWebSocket(`ws://127.0.0.1:${gateway.port}/api`, {}, [API_SUBPROTOCOL, TOKEN_SUBPROTOCOL_PREFIX + gateway.token]);
      if (!api.accepted) throw new Error('refused');
      api.socket.on('error', () => {});
      const closed = new Promise<number>((resolve) => api.socket.once('close', (code) => resolve(code)));
      api.socket.send(JSON.stringify({ id: 1, method: 'getStatus', params: 'x'.repeat(2 << 20) }));
      expect(await withTimeout(closed, 5_000, 'close')).toBe(1009);
      await expectAlive();
    });
  });

  describe('limits on what one connection may ask', () => {
    it('answers 10 000 levels of nesting with a named error, not `internal`', async () => {
      const api = await tryWebSocket(`ws://127.0.0.1:${gateway.port}/api`, {}, [API_SUBPROTOCOL, TOKEN_SUBPROTOCOL_PREFIX + gateway.token]);
      if (!api.accepted) throw new Error('refused');
      const reply = new Promise<unknown>((resolve) => api.socket.once('message', (data) => resolve(JSON.parse(String(data)))));
      const deep = '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000);
      api.socket.send(`{"id":1,"method":"setConfig","params":{"config":${deep}}}`);
      expect(await reply).toEqual({
        id: 1,
        ok: false,
        error: { code: 'bad-request', message: 'the message nests deeper than 64 levels' },
      });
      api.socket.close();
      await expectAlive();
    });

    it('answers `busy` beyond 64 requests waiting on one connection, and serves the rest', async () => {
      const raw = await rawWebSocket(gateway.port, gateway.token);
      const count = 300;
      // One write: the server reads them in one go, before any has been answered.
      raw.socket.write(Buffer.concat(Array.from({ length: count }, (_, id) => frame(JSON.stringify({ id, method: 'getStatus' })))));
      await waitUntil('every answer', () => textFrames(raw.received()).length >= count, 10_000);
      const answers = textFrames(raw.received()).map((text) => JSON.parse(text) as { id: number; ok: boolean; error?: { code: string; message: string } });
      expect(new Set(answers.map((answer) => answer.id)).size).toBe(count);
      const busy = answers.filter((answer) => !answer.ok);
      expect(busy.length).toBeGreaterThan(0);
      expect(answers.filter((answer) => answer.ok).length).toBeGreaterThanOrEqual(64);
      expect(busy[0]!.error).toEqual({
        code: 'busy',
        message: 'getStatus: 64 requests on this connection are still waiting for an answer; wait for them',
      });
      raw.socket.destroy();
      await expectAlive();
    });

    it('stops reading from a client that never reads its answers, and serves it again once it does', async () => {
      const raw = await rawWebSocket(gateway.port, gateway.token);
      raw.socket.pause();
      const rssBefore = residentBytes(gateway.child.pid!);
      const paused = () => gateway.output().includes('stopped reading a WebSocket client');
      const batch = Buffer.concat(Array.from({ length: 2_000 }, () => frame('{"id":1,"method":"getStatus"}')));
      let sent = 0;
      // Without back-pressure the gateway would read on and buffer every answer.
      while (!paused() && sent < 1_000_000) {
        raw.socket.write(batch);
        sent += 2_000;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(paused()).toBe(true);
      expect(residentBytes(gateway.child.pid!) - rssBefore).toBeLessThan(100 << 20);
      await expectAlive();

      // Reading again drains the answers; the gateway then reads on and answers a last request.
      const marker = Buffer.from('"id":"last"');
      const sawLast = new Promise<void>((resolve) => {
        let tail = Buffer.alloc(0);
        raw.socket.on('data', (data: Buffer) => {
          tail = Buffer.concat([tail.subarray(-64), data]);
          if (tail.includes(marker)) resolve();
          raw.chunks.length = 0; // keep the test's own memory flat
        });
      });
      raw.socket.write(frame('{"id":"last","method":"getStatus"}'));
      raw.socket.resume();
      await withTimeout(sawLast, 60_000, 'the answer to the last request');
      // Logged before the gateway read on, but its stdout is another pipe: it may reach the test after the answer.
      await waitUntil('the gateway saying it reads the client again', () => gateway.output().includes('reading a WebSocket client again'));
      raw.socket.destroy();
      await expectAlive();
    }, 90_000);
  });
});
