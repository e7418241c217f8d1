import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { homingConfigSchema } from '../gateway/homing-config';
import { capture } from './fixtures/capture';
import { withLedger } from './ledger-access';
import { runCli } from './run';
import { openDatabase } from '../gateway/db/database';
import { homingMigrations } from '../gateway/db/migrations';
import { SessionReader } from '../gateway/session/session-reader';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'homing-cli-demo-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('homing demo', () => {
  it('fills a new directory with conversations and replies in every delivery state', async () => {
    const dir = join(root, 'demo');
    const { context, out } = capture();
    expect(await runCli(['demo', '--data-dir', dir], context)).toBe(0);
    expect(out.join('\n')).toContain(`homing gateway --data-dir ${dir}`);

    const config = homingConfigSchema.parse(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')));
    expect(config.platforms.irc).toMatchObject({ host: '127.0.0.1', port: 6667, tls: false });

    const rows = withLedger(dir, (ledger) => ledger.listDeliveries().deliveries)!;
    const states = new Set(rows.map((row) => `${row.state}${row.state === 'failed' ? (row.nextAttemptAt ? '+retry' : '+final') : ''}`));
    expect([...states].sort()).toEqual(['abandoned', 'attempting', 'delivered', 'failed+final', 'failed+retry', 'pending']);
    expect(rows.find((row) => row.state === 'attempting')).toMatchObject({ chunksDelivered: 1, chunksTotal: 3 });
    expect(rows.find((row) => row.state === 'failed' && row.nextAttemptAt)!.nextAttemptAt).toBeGreaterThan(Date.now());
    expect(rows.filter((row) => row.state === 'abandoned').map((row) => row.abandonReason?.split(/[: ]/)[0]).sort()).toEqual([
      'discarded',
      'gave',
      'stale',
    ]);
    expect(new Set(rows.map((row) => row.platform))).toEqual(new Set(['local', 'irc']));

    const db = openDatabase(join(dir, 'homing.db'), { migrations: homingMigrations });
    try {
      const sessions = new SessionReader(db, dir).list().sessions;
      expect(sessions.map((session) => session.title).sort()).toEqual(['#homelab', '#homing', 'You', 'alice', 'bob']);
      // Every reply is in its transcript: nothing looks interrupted to the gateway.
      expect(sessions.reduce((sum, session) => sum + session.assistantMessageCount, 0)).toBe(rows.length);
    } finally {
      db.close();
    }
  });

  it('replaces a previous demo and refuses a directory that holds anything else', async () => {
    const dir = join(root, 'demo');
    expect(await runCli(['demo', '--data-dir', dir], capture().context)).toBe(0);
    const demoOwed = withLedger(dir, (ledger) => ledger.listDeliveries({ filter: 'owed' }).total) ?? 0;
    expect(demoOwed).toBeGreaterThan(0);
    expect(await runCli(['demo', '--data-dir', dir, '--owed', '120'], capture().context)).toBe(0);
    // Replaced, not added to: the demo's own owed rows once, plus the 120.
    expect(withLedger(dir, (ledger) => ledger.listDeliveries({ filter: 'owed' }).total)).toBe(demoOwed + 120);

    const real = join(root, 'real');
    mkdirSync(real);
    writeFileSync(join(real, 'homing.db'), 'precious');
    const { context, err } = capture();
    expect(await runCli(['demo', '--data-dir', real], context)).toBe(1);
    expect(err.join('\n')).toMatch(/is not empty and is not a previous demo/);
    expect(readFileSync(join(real, 'homing.db'), 'utf8')).toBe('precious');
    expect(existsSync(join(real, 'config.json'))).toBe(false);
  });

  it('requires --data-dir: a demo never lands in the real data directory', async () => {
    const { context, err } = capture();
    expect(await runCli(['demo'], context)).toBe(2);
    expect(err.join('\n')).toMatch(/--data-dir DIR is required/);
  });
});
