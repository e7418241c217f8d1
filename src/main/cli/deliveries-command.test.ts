import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { claim, ManualClock, openTestDb, removeTempDirs, reply, sendAll, tempDir, testLedger } from '../gateway/ledger/fixtures/test-ledger';
import { acquireDataDirLock } from '../gateway/data-dir-lock';
import { capture } from './fixtures/capture';
import { runCli } from './run';

afterEach(removeTempDirs);

/** A data dir holding one failed, one owed-but-orphaned and one delivered reply. */
function dataDir() {
  const dir = tempDir();
  const db = openTestDb(join(dir, 'homing.db'));
  const clock = new ManualClock(Date.now());
  const ledger = testLedger(db, clock);
  for (const n of [1, 2, 3]) ledger.recordObligation(reply(n));
  ledger.markFailed(claim(ledger, reply(1).obligationId).receipt, { error: 'chat not found', retryable: false, permanent: true });
  sendAll(ledger, claim(ledger, reply(3).obligationId));
  ledger.stop();
  db.close();
  return dir;
}

describe('homing deliveries / homing sweep', () => {
  it('lists by the window\'s words: --state owed is what is still owed, --state given-up what was given up', async () => {
    const dir = dataDir();
    const owed = capture();
    expect(await runCli(['deliveries', 'list', '--json', '--state', 'owed', '--data-dir', dir], owed.context)).toBe(0);
    expect(JSON.parse(owed.out.join('\n')).deliveries.map((row: { id: string }) => row.id)).toEqual([reply(2).obligationId]);
    const givenUp = capture();
    expect(await runCli(['deliveries', 'list', '--json', '--state', 'given-up', '--data-dir', dir], givenUp.context)).toBe(0);
    expect(JSON.parse(givenUp.out.join('\n')).deliveries.map((row: { id: string }) => row.id)).toEqual([reply(1).obligationId]);
  });

  it('says a --data-dir that does not exist is wrong (exit 1) instead of listing nothing', async () => {
    const missing = join(tempDir(), 'Homnig');
    for (const args of [['deliveries', 'list'], ['sessions', 'list'], ['pairing', 'list'], ['sweep']]) {
      const run = capture();
      expect(await runCli([...args, '--data-dir', missing], run.context)).toBe(1);
      expect(run.err.join('\n')).toContain(`${missing} does not exist`);
    }
  });

  it('lists deliveries as JSON rows with the documented fields, filtered by state (HOMING_DATA_DIR honoured)', async () => {
    const dir = dataDir();
    const { context, out } = capture({ HOMING_DATA_DIR: dir });
    expect(await runCli(['deliveries', 'list', '--json', '--state', 'failed'], context)).toBe(0);
    const page = JSON.parse(out.join('\n'));
    expect(page.deliveries).toEqual([
      expect.objectContaining({
        id: reply(1).obligationId,
        state: 'failed',
        platform: 'irc',
        chatId: 'chat-1',
        threadId: null,
        sessionKey: reply(1).sessionKey,
        attempts: 1,
        chunksDelivered: 0,
        chunksTotal: 1,
        lastError: 'permanent: chat not found',
        createdAt: expect.any(Number),
        updatedAt: expect.any(Number),
      }),
    ]);
    const table = capture();
    expect(await runCli(['deliveries', 'list', '--data-dir', dir], table.context)).toBe(0);
    expect(table.out[0]).toMatch(/^ID\s+STATE\s+PLATFORM/);
    expect(table.out).toHaveLength(4);
  });

  it('pages with --after: the table ends with the next cursor, and walking it reads every row once', async () => {
    const dir = tempDir();
    const db = openTestDb(join(dir, 'homing.db'));
    const ledger = testLedger(db, new ManualClock(Date.now()));
    // All in one millisecond: the pages are cut inside a tie.
    db.transaction(() => {
      for (let n = 0; n < 120; n++) ledger.recordObligation(reply(500 + n));
    })();
    ledger.stop();
    db.close();

    const table = capture();
    expect(await runCli(['deliveries', 'list', '--data-dir', dir], table.context)).toBe(0);
    expect(table.out.at(-1)).toMatch(/^\(page 1; next page: --after [A-Za-z0-9_-]+\)$/);
    const ids: string[] = [];
    let after: string | null = null;
    do {
      const json = capture();
      expect(await runCli(['deliveries', 'list', '--json', '--data-dir', dir, ...(after ? ['--after', after] : [])], json.context)).toBe(0);
      const page = JSON.parse(json.out.join('\n')) as { deliveries: { id: string }[]; nextCursor: string | null; page: number };
      ids.push(...page.deliveries.map((row) => row.id));
      after = page.nextCursor;
    } while (after);
    expect(ids).toHaveLength(120);
    expect(new Set(ids).size).toBe(120);
    const last = capture();
    expect(await runCli(['deliveries', 'list', '--data-dir', dir, '--after', table.out.at(-1)!.match(/--after (\S+)\)/)![1]!], last.context)).toBe(0);
    expect(last.out.at(-1)).toMatch(/^\(page 2; next page: --after /);
  });

  it('retries and discards by id; an unknown id is a clear error with exit code 1', async () => {
    const dir = dataDir();
    const retried = capture();
    expect(await runCli(['deliveries', 'retry', reply(1).obligationId, '--data-dir', dir], retried.context)).toBe(0);
    expect(retried.out[0]).toMatch(/is owed again/);
    const discarded = capture();
    expect(await runCli(['deliveries', 'discard', reply(1).obligationId, '--data-dir', dir], discarded.context)).toBe(0);
    const conflict = capture();
    expect(await runCli(['deliveries', 'discard', reply(3).obligationId, '--data-dir', dir], conflict.context)).toBe(1);
    expect(conflict.err[0]).toMatch(/already delivered/);
    const unknown = capture();
    expect(await runCli(['deliveries', 'retry', 'f'.repeat(24), '--data-dir', dir], unknown.context)).toBe(1);
    expect(unknown.err).toEqual([`homing: no delivery with id ${'f'.repeat(24)}`]);
  });

  it('retry takes the data directory’s lock when no gateway runs, and is refused with a clear line while one holds it unreachable', async () => {
    const dir = dataDir();
    const gateway = acquireDataDirLock(dir, { mode: 'headless', pid: 4242 });
    try {
      const refused = capture();
      expect(await runCli(['deliveries', 'retry', reply(1).obligationId, '--data-dir', dir], refused.context)).toBe(1);
      expect(refused.err.join('\n')).toMatch(/4242.*cannot be reached from here/s);
    } finally {
      gateway.release();
    }
    const listed = capture();
    await runCli(['deliveries', 'list', '--json', '--state', 'failed', '--data-dir', dir], listed.context);
    expect(JSON.parse(listed.out.join('\n')).deliveries).toHaveLength(1);
    const retried = capture();
    expect(await runCli(['deliveries', 'retry', reply(1).obligationId, '--data-dir', dir], retried.context)).toBe(0);
    // It let the lock go again: a gateway can start.
    acquireDataDirLock(dir, { mode: 'headless' }).release();
  });

  it.each([
    [['deliveries'], /missing argument/],
    [['deliveries', 'frob'], /unknown action "frob"/],
    [['deliveries', 'list', '--state', 'lost'], /--state must be one of pending, attempting, delivered, failed, abandoned/],
    [['deliveries', 'retry'], /which delivery\?/],
    [['deliveries', 'retry', 'xyz'], /"xyz" is not a delivery id/],
    [['deliveries', 'discard', 'f'.repeat(24), '--json'], /apply to list only/],
    [['deliveries', 'discard', 'f'.repeat(24), '--after', 'WzEsImEiLDJd'], /apply to list only/],
    [['deliveries', 'list', '--after', 'page-2'], /--after takes the cursor a previous page printed, not "page-2"/],
    [['deliveries', 'list', '--after', 'WzEsImEiLDJd', '--page', '2'], /give --after or --page, not both/],
    [['sweep', '--frob'], /unknown flag/],
    [['sweep', 'now'], /unexpected argument "now"/],
  ])('rejects %j with one line and exit code 2', async (argv, message) => {
    const { context, err } = capture({ HOMING_DATA_DIR: tempDir() });
    expect(await runCli(argv, context)).toBe(2);
    expect(err).toHaveLength(1);
    expect(err[0]).toMatch(message);
  });

  it('sweep claims nothing (no platform is connected here), says so, and reports what is owed', async () => {
    const dir = dataDir();
    const text = capture();
    expect(await runCli(['sweep', '--data-dir', dir], text.context)).toBe(0);
    expect(text.out[0]).toMatch(/nothing claimed or sent — this command connects to no chat platform/);
    const json = capture();
    expect(await runCli(['sweep', '--json', '--data-dir', dir], json.context)).toBe(0);
    expect(JSON.parse(json.out.join('\n'))).toMatchObject({ claimed: 0, owed: 1, waitingForPlatform: 1, connectedPlatforms: [] });
  });

  it("sweep applies config.json's delivery rules, as the running gateway does", async () => {
    const dir = dataDir();
    const defaults = capture();
    expect(await runCli(['sweep', '--json', '--data-dir', dir], defaults.context)).toBe(0);
    expect(JSON.parse(defaults.out.join('\n'))).toMatchObject({ pruned: 0 });
    // An error elsewhere in the file does not matter to the sweep; only the delivery section is read.
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ delivery: { retentionDays: 0 }, colour: 'blue' }));
    const configured = capture();
    expect(await runCli(['sweep', '--json', '--data-dir', dir], configured.context)).toBe(0);
    expect(JSON.parse(configured.out.join('\n'))).toMatchObject({ pruned: 1 });
  });

  it('sweep refuses, naming the field, when the delivery section is invalid; list only warns', async () => {
    const dir = dataDir();
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ delivery: { maxAttempts: 0 } }));
    const sweep = capture();
    expect(await runCli(['sweep', '--data-dir', dir], sweep.context)).toBe(1);
    expect(sweep.err[0]).toMatch(/config\.json: delivery\.maxAttempts: .* not sweeping/);
    const list = capture();
    expect(await runCli(['deliveries', 'list', '--data-dir', dir], list.context)).toBe(0);
    expect(list.err[0]).toMatch(/delivery\.maxAttempts: .*using the default delivery rules/);
  });
});
