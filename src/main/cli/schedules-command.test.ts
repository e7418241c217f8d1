import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ScheduleRow } from '../../shared/api';
import { Gateway } from '../gateway/gateway';
import { silentLogger } from '../gateway/logger';
import { capture } from './fixtures/capture';
import { runCli } from './run';

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'homing-cli-schedules-'));
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const { context, out, err } = capture();
  const code = await runCli(['schedules', ...args, '--data-dir', dataDir], context);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('homing schedules', () => {
  it('adds, lists, runs and removes through the running gateway; lists and removes with none running', async () => {
    const gateway = Gateway.start({ dataDir, mode: 'headless', version: '0.0.0-test', logger: silentLogger, detectSleep: false, detectOllama: false, updateCheck: false });
    try {
      await gateway.ready;
      const added = await cli('add', '--every', 'weekday at 7:45', '--prompt', 'What is on my calendar today?', '--name', 'calendar', '--zone', 'Europe/Berlin', '--grace', '30');
      expect(added.err).toBe('');
      expect(added.out).toMatch(/^Made schedule 1 “calendar”: every weekday at 07:45 \(Europe\/Berlin\), next run /);
      const once = await cli('add', '--once', 'in 3 hours', '--text', 'Stretch!');
      expect(once.code).toBe(0);

      const listed = await cli('list', '--json');
      const rows = JSON.parse(listed.out) as ScheduleRow[];
      expect(rows.map((row) => [row.id, row.name, row.createdVia, row.graceMinutes, row.action])).toEqual(
        expect.arrayContaining([
          [1, 'calendar', 'cli', 30, 'prompt'],
          [2, 'Stretch!', 'cli', 120, 'text'],
        ]),
      );

      expect((await cli('run', '1')).out).toBe('Running schedule 1 “calendar” now; its answer arrives in its conversation.');
      await gateway.schedules.scheduler.idle();
      expect((await cli('list')).out).toMatch(/1 {2}“calendar” {2}every weekday at 07:45 \(Europe\/Berlin\) {2}→ the window’s chat {2}next .+\n {4}asks the agent: What is on my calendar today\?\n {4}last run .+: answered/);

      const bad = await cli('add', '--every', 'someday', '--prompt', 'x');
      expect(bad.code).toBe(1);
      expect(bad.err).toMatch(/the time is not understood/);
      expect((await cli('remove', '2')).out).toBe('Removed schedule 2.');
    } finally {
      await gateway.stop();
    }

    // No gateway running: listing and removing work on the database; making one says what to do.
    expect((await cli('list')).out).toMatch(/^1 {2}“calendar”/);
    const offline = await cli('add', '--every', 'day at 08:00', '--prompt', 'x');
    expect(offline.code).toBe(1);
    expect(offline.err).toMatch(/no gateway runs on .+: a schedule is made by the running gateway — start it/);
    expect((await cli('remove', '1')).out).toBe('Removed schedule 1.');
    expect((await cli('list')).out).toMatch(/^No schedules\./);
    expect((await cli('remove', '1')).err).toMatch(/there is no schedule 1/);
  });

  it('refuses what it cannot read, with the usage', async () => {
    expect((await cli('add', '--prompt', 'x')).err).toMatch(/say when with --every WHEN or --once WHEN/);
    expect((await cli('add', '--every', 'hour')).err).toMatch(/say what with --prompt TEXT or --text TEXT/);
    expect((await cli('remove', 'abc')).err).toMatch(/which schedule\? give its number/);
    expect((await cli('list', '--every', 'hour')).err).toMatch(/--every applies to add only/);
    expect((await cli('frobnicate')).err).toMatch(/unknown action "frobnicate"/);
  });
});
