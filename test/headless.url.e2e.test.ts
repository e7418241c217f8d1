import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectApi } from './support/api-socket';
import { HOMING_BIN, startHeadlessGateway, type RunningGateway } from './support/gateway-process';

/** `homing <args>` as a real process: exit code and output. */
function homing(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [HOMING_BIN, ...args], { env: { ...process.env, HOMING_DATA_DIR: '' } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

function occupy(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

async function expectAnswers(gateway: RunningGateway): Promise<void> {
  const api = await connectApi(gateway);
  try {
    expect(await api.call('getStatus')).toMatchObject({ state: 'running' });
  } finally {
    api.close();
  }
}

describe('a headless window URL that survives restarts (real `homing gateway` and `homing url` processes)', () => {
  let dataDir: string;
  let gateway: RunningGateway | undefined;
  let blocker: Server | undefined;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-url-'));
  });

  afterEach(async () => {
    await gateway?.stop();
    gateway = undefined;
    await new Promise((resolve) => (blocker ? blocker.close(resolve) : resolve(undefined)));
    blocker = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('`homing url` says what to do before any window was served from the data directory', async () => {
    const result = await homing(['url', '--data-dir', dataDir]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim()).toBe(
      `homing: no headless window has been served from ${dataDir} yet: start \`npx homing gateway\` (it prints the URL)`,
    );
  });

  it('keeps the port and the token in headless.json (0600), prints the URL with `homing url`, and serves the same URL after a restart', async () => {
    gateway = await startHeadlessGateway(['--data-dir', dataDir]);
    const first = gateway.url;
    const file = join(dataDir, 'headless.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ port: gateway.port, token: gateway.token });
    expect(await homing(['url', '--data-dir', dataDir])).toEqual({ code: 0, stdout: `${first}\n`, stderr: '' });

    await gateway.stop();
    // No --port: the saved one.
    gateway = await startHeadlessGateway(['--data-dir', dataDir], {}, { port: 'saved' });
    expect(gateway.url).toBe(first);
    await expectAnswers(gateway);
    expect(await homing(['url', '--data-dir', dataDir])).toMatchObject({ code: 0, stdout: `${first}\n` });
  });

  it('moves to a free port when the saved one is taken, says so, and keeps the new one', async () => {
    gateway = await startHeadlessGateway(['--data-dir', dataDir]);
    const { port, token } = gateway;
    await gateway.stop();
    blocker = await occupy(port);

    gateway = await startHeadlessGateway(['--data-dir', dataDir], {}, { port: 'saved' });
    expect(gateway.port).not.toBe(port);
    expect(gateway.token).toBe(token);
    expect(gateway.output()).toContain(
      `homing: port ${port} on 127.0.0.1 is in use, so the window moved to port ${gateway.port} (kept for the next starts; \`npx homing url\` prints the URL)`,
    );
    expect(JSON.parse(readFileSync(join(dataDir, 'headless.json'), 'utf8'))).toEqual({ port: gateway.port, token });
    expect((await homing(['url', '--data-dir', dataDir])).stdout).toBe(`${gateway.url}\n`);
    await expectAnswers(gateway);
  });

  it('refuses an explicit --port that is taken, naming it', async () => {
    blocker = await occupy(0);
    const port = (blocker.address() as { port: number }).port;
    await expect(startHeadlessGateway(['--data-dir', dataDir, '--port', String(port)], {}, { port: 'saved' })).rejects.toThrow(
      `port ${port} on 127.0.0.1 is in use; choose another with --port`,
    );
  });

  it('makes a new token when headless.json is damaged, and says so', async () => {
    writeFileSync(join(dataDir, 'headless.json'), '{"port": 1, "token": "short"}');
    gateway = await startHeadlessGateway(['--data-dir', dataDir]);
    expect(gateway.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(gateway.output()).toContain('made a new headless access token');
    expect(JSON.parse(readFileSync(join(dataDir, 'headless.json'), 'utf8'))).toEqual({ port: gateway.port, token: gateway.token });
    await expectAnswers(gateway);
  });
});
