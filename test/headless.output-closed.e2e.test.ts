import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';

/** A WebSocket upgrade with a wrong token: refused, and the refusal is a log line (on stderr). */
function refusedUpgrade(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      path: '/api?token=wrong',
      headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version': '13' },
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      reject(new Error('a wrong token was let in'));
    });
    req.on('error', reject);
    req.end();
  });
}

function getWindow(port: number, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: `/?token=${token}` }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    })
      .on('error', reject)
      .end();
  });
}

/**
 * `homing gateway | head`: the reader of the gateway's output goes away. The
 * gateway used to die at its next log line (an unhandled EPIPE), silently.
 */
describe('a headless gateway whose output pipes close', () => {
  let gateway: RunningGateway | undefined;
  let scratch: string | undefined;
  afterEach(async () => {
    await gateway?.kill();
    gateway = undefined;
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('keeps running and serving after stdout and stderr are closed and it logs again', async () => {
    scratch = mkdtempSync(join(tmpdir(), 'homing-epipe-'));
    gateway = await startHeadlessGateway(['--data-dir', join(scratch, 'data')]);
    const { child, port, token } = gateway;
    // The reading ends go away, as when `head` has read its ten lines.
    child.stdout!.destroy();
    child.stderr!.destroy();
    // Each refusal writes a log line into the closed pipe.
    for (let i = 0; i < 5; i++) expect(await refusedUpgrade(port)).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect({ exitCode: child.exitCode, signal: child.signalCode }).toEqual({ exitCode: null, signal: null });
    expect(await getWindow(port, token)).toBe(200);
    // And it still stops cleanly.
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
