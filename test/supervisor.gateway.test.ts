import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { Supervisor, type SupervisedProcess, type SupervisorStatus } from '../src/main/supervisor';
import { HOMING_BIN } from './support/gateway-process';

interface GatewayChild extends SupervisedProcess {
  readonly url: Promise<string>;
}

/** The real headless gateway as the supervised process. */
function startGateway(dataDir: string): GatewayChild {
  const child = spawn(process.execPath, [HOMING_BIN, 'gateway', '--port', '0', '--data-dir', dataDir], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let output = '';
  const url = new Promise<string>((resolve) =>
    child.stdout!.on('data', (data: Buffer) => {
      output += data.toString();
      const match = /Open the window: (\S+)/.exec(output);
      if (match) resolve(match[1]!);
    }),
  );
  return {
    get pid() {
      return child.pid;
    },
    onExit: (listener) => child.once('exit', (code, signal) => listener(code, signal)),
    kill: () => child.kill('SIGTERM'),
    url,
  };
}

async function statusOver(url: string): Promise<unknown> {
  const parsed = new URL(url);
  const socket = new WebSocket(`ws://${parsed.host}/api${parsed.search}`);
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  const reply = new Promise((resolve) => socket.once('message', (data) => resolve(JSON.parse(String(data)))));
  socket.send(JSON.stringify({ id: 1, method: 'getStatus' }));
  const answer = await reply;
  socket.close();
  return answer;
}

describe('the supervisor keeps the real gateway process alive', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'homing-supervised-'));
  const children: GatewayChild[] = [];
  const supervisor = new Supervisor({
    start: () => {
      const child = startGateway(dataDir);
      children.push(child);
      return child;
    },
    initialBackoffMs: 50,
  });
  afterAll(async () => {
    await supervisor.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('restarts the gateway after SIGKILL, and the new one answers on the same data directory', async () => {
    supervisor.start();
    const first = children[0]!;
    await statusOver(await first.url);

    const restarted = new Promise<SupervisorStatus>((resolve) => {
      const poll = setInterval(() => {
        if (children.length === 2 && supervisor.status().state === 'running') {
          clearInterval(poll);
          resolve(supervisor.status());
        }
      }, 10);
    });
    process.kill(first.pid!, 'SIGKILL');
    const status = await restarted;
    expect(status.crashes).toBe(1);
    expect(status.lastExit?.signal).toBe('SIGKILL');
    const answer = await statusOver(await children[1]!.url);
    expect(answer).toMatchObject({ ok: true, value: { state: 'running', dataDir, pid: children[1]!.pid } });
  });
});
