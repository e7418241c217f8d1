import { fdatasync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CommitGroup } from '../db/commit-group';
import type { Db } from '../db/database';
import { EventBus } from '../events';
import { ManualClock, openTestDb, removeTempDirs, tempDir } from '../ledger/fixtures/test-ledger';
import { silentLogger } from '../logger';
import type { NewReply } from './deliverer';
import { DeliveryService } from './delivery-service';
import type { PlatformSender } from './sender';
import { RESEND_MARKER } from './marker';
import { walFrames } from '../../../../test/support/wal-log';
import { waitUntil } from '../../../../test/support/wait';

afterEach(removeTempDirs);

/** A group commit whose disk answers only when the test says so: each commit's `onDisk` waits for `reach()`. */
class SlowDisk extends CommitGroup {
  private readonly held: (() => void)[] = [];

  constructor(db: Db) {
    super(db);
  }

  override committed<T>(work: () => T): Promise<{ readonly value: T; readonly onDisk: Promise<void> }> {
    return super.committed(work).then(({ value, onDisk }) => ({
      value,
      onDisk: onDisk.then(() => new Promise<void>((resolve) => this.held.push(resolve))),
    }));
  }

  /** The oldest commit still waiting (once its real fdatasync is done) reaches the disk. */
  async reach(): Promise<void> {
    await waitUntil('a commit waiting for the disk', () => this.held.length > 0);
    this.held.shift()!();
  }
}

const reply = (n: number): NewReply => ({
  sessionKey: 'agent:main:irc:direct:ada',
  messageRef: `m${n}`,
  chatId: '#homing',
  threadId: null,
  replyTo: null,
  content: `reply ${n}`,
  chunks: [`reply ${n}`],
});

const turns = (n = 5) => new Promise<void>((resolve) => {
  let left = n;
  const next = () => (--left <= 0 ? resolve() : setTimeout(next, 1));
  setTimeout(next, 1);
});

function setUp(serverIdempotency: boolean) {
  const db = openTestDb(join(tempDir(), 'homing.db'));
  const group = new SlowDisk(db);
  const service = DeliveryService.start({ db, clock: new ManualClock(), logger: silentLogger, bus: new EventBus(silentLogger), group, exclusive: true });
  const sent: string[] = [];
  const platform: PlatformSender = {
    name: 'irc',
    serverIdempotency,
    send: async (text) => {
      sent.push(text);
      return { ok: true, platformMessageId: `p${sent.length}` };
    },
  };
  service.registerPlatform(platform);
  return { db, group, service, sent };
}

describe('a reply recorded at the commit, sent once on the disk', () => {
  for (const serverIdempotency of [false, true]) {
    it(`sends nothing before the record's commit is on the disk (${serverIdempotency ? 'a platform that deduplicates' : 'a platform that cannot'})`, async () => {
      const { db, group, service, sent } = setUp(serverIdempotency);
      const recorded = await service.record('irc', reply(1));
      // Committed: the ledger has it (a next turn may read it) …
      expect(service.ledger.getDelivery(recorded.id)?.state).toBe('attempting');
      const outcome = service.sendRecorded(recorded);
      await turns();
      // … but not one chunk left before the disk said so.
      expect(sent).toEqual([]);
      await group.reach();
      expect(await outcome).toMatchObject({ status: 'delivered' });
      expect(sent).toEqual(['reply 1']);
      await service.stop();
      db.close();
    });
  }

  it('holds a later reply a running drain takes from the ledger until its own record is on the disk', async () => {
    // A platform that deduplicates writes nothing durable before a send: only the record's own disk promise guards it.
    const { db, group, service, sent } = setUp(true);
    const first = await service.record('irc', reply(1));
    const second = await service.record('irc', reply(2)); // behind the first: recorded pending
    expect(service.ledger.getDelivery(second.id)?.state).toBe('pending');
    const outcomes = [service.sendRecorded(first), service.sendRecorded(second)];
    await group.reach(); // the first record's commit
    await waitUntil('the first reply delivered', () => service.ledger.getDelivery(first.id)?.state === 'delivered');
    // A drain asked for now (a sweep, a reconnect) claims the second reply from the ledger …
    void service.drain(first.reply.sessionKey);
    await waitUntil('the second reply claimed', () => service.ledger.getDelivery(second.id)?.state === 'attempting');
    await turns(10);
    // … and sends it only once its record is on the disk.
    expect(sent).toEqual(['reply 1']);
    await group.reach();
    await Promise.all(outcomes);
    await waitUntil('the second reply sent', () => sent.length === 2);
    expect(sent).toEqual(['reply 1', 'reply 2']);
    await service.stop();
    db.close();
  });
});

describe('a conversation’s next reply', () => {
  it('is claimed in the commit that marks the one before it delivered, not in a commit of its own after it', async () => {
    const db = openTestDb(join(tempDir(), 'homing.db'));
    const service = DeliveryService.start({ db, clock: new ManualClock(), logger: silentLogger, bus: new EventBus(silentLogger), exclusive: true });
    // Commits counted in the write-ahead log (each ends with a commit frame); no checkpoint empties it meanwhile.
    db.pragma('wal_autocheckpoint = 0');
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    const commits = () => walFrames(`${db.name}-wal`, pageSize).filter((frame) => frame.commit).length;
    const sent: { text: string; commits: number }[] = [];
    let confirm!: () => void;
    service.registerPlatform({
      name: 'irc',
      serverIdempotency: true, // nothing durable is written before a send: only the ledger's own commits count
      send: async (text) => {
        sent.push({ text, commits: commits() });
        if (sent.length === 1) await new Promise<void>((resolve) => (confirm = resolve));
        return { ok: true, platformMessageId: `p${sent.length}` };
      },
    });
    const first = service.sendRecorded(await service.record('irc', reply(1)));
    await waitUntil('the first reply on its way', () => sent.length === 1);
    const second = await service.record('irc', reply(2));
    expect(service.ledger.getDelivery(second.id)?.state).toBe('pending'); // behind the first
    const outcomes = Promise.all([first, service.sendRecorded(second)]);
    // The second reply's send waits for its record's fdatasync before it tells the running lane
    // to look again: confirm the first only once it has (else, when that sync takes longer than
    // LATER_MS, the lane has ended, the delivered mark commits alone and a new lane claims later).
    await second.onDisk;
    await new Promise((resolve) => setImmediate(resolve));
    const before = commits();
    confirm();
    expect(await outcomes).toMatchObject([{ status: 'delivered' }, { status: 'delivered' }]);
    expect(sent.map((send) => send.text)).toEqual(['reply 1', 'reply 2']);
    // Between the first reply's confirmation and the second's send: one commit, the mark and the claim.
    expect(sent[1]!.commits - before).toBe(1);
    await service.stop();
    db.close();
  });
});

describe.runIf(process.platform === 'linux')('a disk that fails an fdatasync', () => {
  it('sends nothing of a reply whose record was not synced, and sends it, unmarked, once the log is healed', async () => {
    const db = openTestDb(join(tempDir(), 'homing.db'));
    let failures = 1;
    const group = new CommitGroup(db, {
      fdatasync: (fd, done) => {
        if (failures-- > 0) setImmediate(() => done(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })));
        else fdatasync(fd, done);
      },
    });
    const service = DeliveryService.start({ db, clock: new ManualClock(), logger: silentLogger, bus: new EventBus(silentLogger), group, exclusive: true });
    const sent: string[] = [];
    service.registerPlatform({
      name: 'irc',
      serverIdempotency: false,
      send: async (text) => {
        sent.push(text);
        return { ok: true, platformMessageId: `p${sent.length}` };
      },
    });
    const recorded = await service.record('irc', reply(1));
    // Committed, but the disk refused the sync: not one part leaves, and the ledger shows the failure.
    expect(await service.sendRecorded(recorded)).toEqual({ status: 'waiting', id: recorded.id });
    expect(sent).toEqual([]);
    expect(service.ledgerHealth()).toMatchObject({ ok: false, lastError: expect.stringMatching(/EIO/) });
    expect(group.diskFailing).toBeDefined();
    // The conversation's drain tries again: its "on its way" mark heals the log first, then the part goes, with no marker (it never left).
    await waitUntil('the reply delivered once the log is healed', () => service.ledger.getDelivery(recorded.id)?.state === 'delivered');
    expect(sent).toEqual(['reply 1']);
    expect(sent.some((text) => text.includes(RESEND_MARKER))).toBe(false);
    expect(group.diskFailing).toBeUndefined();
    await service.stop();
    db.close();
  });
});
