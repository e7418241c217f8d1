import { spawnSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/main/gateway/db/database';
import { homingMigrations } from '../src/main/gateway/db/migrations';
import { Ledger, computeObligationId } from '../src/main/gateway/ledger';
import { systemClock } from '../src/main/gateway/clock';
import { HOMING_BIN, startHeadlessGateway, type RunningGateway } from './support/gateway-process';

const running: RunningGateway[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const gateway of running.splice(0)) await gateway.stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'homing-one-'));
  dirs.push(dir);
  return dir;
}

function homing(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [HOMING_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
    child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr, ms: performance.now() - started }));
  });
}

/** A failed reply recorded straight into the ledger (as a crashed gateway would leave it). */
function failedReply(dir: string): string {
  const db = openDatabase(join(dir, 'homing.db'), { migrations: homingMigrations });
  const ledger = new Ledger({ db, clock: systemClock });
  ledger.register();
  const sessionKey = 'agent:main:irc:direct:alice';
  const id = computeObligationId(sessionKey, 'm1', 'hello');
  ledger.recordObligation({ obligationId: id, sessionKey, platform: 'irc', chatId: 'alice', threadId: null, replyTo: null, content: 'hello', chunks: [] });
  const claimed = ledger.markAttempting(id);
  if (!claimed.ok) throw new Error(claimed.reason);
  ledger.markFailed(claimed.claim.receipt, { error: 'permanent: no such nick', retryable: false, permanent: true });
  ledger.stop();
  db.close();
  return id;
}

describe('one gateway per data directory', () => {
  it('refuses a second gateway at once, with exit code 2 and one line naming the running one', async () => {
    const dir = dataDir();
    const first = await startHeadlessGateway(['--data-dir', dir]);
    running.push(first);

    const second = await homing(['gateway', '--data-dir', dir, '--port', '0']);
    expect(second.code).toBe(2);
    expect(second.ms).toBeLessThan(5_000); // process start included; the refusal itself does not wait
    const lines = second.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^homing: another Homing gateway is already running on .* \\(pid ${first.child.pid}, headless, http://127\\.0\\.0\\.1:${first.port}/\\)`));
    // The first one never noticed: it still answers.
    const status = await fetch(`http://127.0.0.1:${first.port}/?token=${first.token}`);
    expect(status.status).toBe(200);
  });

  it('lets the next gateway start at once after the first is killed (the OS drops the lock)', async () => {
    const dir = dataDir();
    const first = await startHeadlessGateway(['--data-dir', dir]);
    await first.kill();
    const second = await startHeadlessGateway(['--data-dir', dir]);
    running.push(second);
    expect(second.output()).toMatch(/Open the window/);
  });

  it('sends retry, discard and sweep from the command line through the running gateway', async () => {
    const dir = dataDir();
    const id = failedReply(dir);
    const gateway = await startHeadlessGateway(['--data-dir', dir]);
    running.push(gateway);

    const retried = await homing(['deliveries', 'retry', id, '--data-dir', dir]);
    expect(retried.stderr).toBe('');
    expect(retried.stdout).toMatch(/the running gateway sends it/);
    expect(retried.code).toBe(0);
    const swept = await homing(['sweep', '--json', '--data-dir', dir]);
    expect(swept.code).toBe(0);
    expect(JSON.parse(swept.stdout)).toMatchObject({ via: 'gateway', owed: 1 });
    const discarded = await homing(['deliveries', 'discard', id, '--data-dir', dir]);
    expect(discarded.code).toBe(0);
    // Reading works beside it, straight from the database.
    const listed = spawnSync(process.execPath, [HOMING_BIN, 'deliveries', 'list', '--json', '--data-dir', dir], { encoding: 'utf8' });
    expect(JSON.parse(listed.stdout).deliveries[0]).toMatchObject({ id, state: 'abandoned', abandonReason: 'discarded by the user' });
  });

  it('takes the lock itself for a change when no gateway runs, so none can start in the middle of it', async () => {
    const dir = dataDir();
    const id = failedReply(dir);
    const retried = await homing(['deliveries', 'retry', id, '--data-dir', dir]);
    expect(retried.code).toBe(0);
    expect(retried.stdout).toMatch(/once it runs/);
    const db = new Database(join(dir, 'homing.db'), { readonly: true });
    expect(db.prepare('SELECT state, attempts FROM ledger_outbox WHERE id = ?').get(id)).toEqual({ state: 'pending', attempts: 0 });
    db.close();
  });
});
