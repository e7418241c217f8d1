import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer, type Server as NetServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { testTelegramConnection } from './connection-test';

const TOKEN = '123456789:AAFakeTokenForTestsOnly_abcdefghijk';
const servers: (Server | NetServer)[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function listen(server: Server | NetServer): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A port with nothing listening: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('Telegram Test connection', () => {
  it('answers within its time when the server never does, saying so', async () => {
    // Accepts the connection and never answers a byte.
    const port = await listen(createServer((socket) => void sockets.push(socket)));
    const started = Date.now();
    const result = await testTelegramConnection(`http://127.0.0.1:${port}`, TOKEN, 1_500);
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(result).toEqual({ ok: false, message: `no answer from http://127.0.0.1:${port} within 2 s` });
  });

  it('names a refused connection in words', async () => {
    const port = await closedPort();
    const result = await testTelegramConnection(`http://127.0.0.1:${port}`, TOKEN, 5_000);
    expect(result.ok).toBe(false);
    expect(result.message).toContain('connection refused');
    expect(result.message).toContain('ECONNREFUSED');
    expect(result.message).not.toContain(TOKEN);
  });

  it('names a TLS failure in words (https to a server that speaks plain HTTP)', async () => {
    const port = await listen(createHttpServer((_req, res) => res.end('{}')));
    const result = await testTelegramConnection(`https://127.0.0.1:${port}`, TOKEN, 5_000);
    expect(result.ok).toBe(false);
    expect(result.message).toMatch(/TLS/);
  });

  it('says Telegram refused the token (authentication)', async () => {
    const port = await listen(
      createHttpServer((_req, res) => res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: false, error_code: 401, description: 'Unauthorized' }))),
    );
    const result = await testTelegramConnection(`http://127.0.0.1:${port}`, TOKEN, 5_000);
    expect(result).toEqual({ ok: false, message: 'Telegram refused the bot token (401 Unauthorized): copy it again from @BotFather' });
  });
});
