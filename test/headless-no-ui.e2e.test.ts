import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HOMING_BIN } from './support/gateway-process';
import { waitUntil } from './support/wait';

/**
 * The built `homing gateway --no-ui` (needs `npm run build`) with no config.json:
 * no window server and only the local chat, so nothing but the command itself
 * keeps Node's event loop alive (the gateway's timers are all unref'd).
 */
describe('homing gateway --no-ui', () => {
  const children: ChildProcess[] = [];
  const dirs: string[] = [];

  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('keeps running with the default config until SIGTERM, then stops cleanly with exit code 0', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'homing-no-ui-'));
    dirs.push(dataDir);
    const child = spawn(process.execPath, [HOMING_BIN, 'gateway', '--no-ui', '--data-dir', dataDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout!.on('data', (data: Buffer) => (output += data.toString()));
    child.stderr!.on('data', (data: Buffer) => (output += data.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );

    await waitUntil('"gateway running"', () => output.includes('gateway running'), 15_000);
    // Before the fix it had exited within milliseconds of this line.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(child.exitCode, output).toBeNull();
    expect(child.signalCode).toBeNull();

    child.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(output).toContain('gateway stopped');
  });
});
