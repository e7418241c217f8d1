import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { judgeOwner, type InstanceRecord } from './liveness';
import { createSystemProbe, type ProcessSighting } from './process-identity';
import { ManualClock, openTestDb, removeTempDirs, reply, testLedger } from './fixtures/test-ledger';

afterEach(removeTempDirs);

const LEASE = 30_000;
const NOW = 1_000_000_000;

function owner(fields: Partial<InstanceRecord> = {}): InstanceRecord {
  return {
    id: 'owner',
    pid: 4242,
    processStart: '777',
    bootId: 'boot-a',
    host: 'laptop',
    startedAt: NOW - 60 * 60_000,
    heartbeatAt: NOW - 5 * 60_000,
    stoppedAt: null,
    ...fields,
  };
}

const sameProcess = (): ProcessSighting => ({ kind: 'present', startTime: '777' });
const judge = (record: InstanceRecord | undefined, inspect: () => ProcessSighting = sameProcess, bootId: string | null = 'boot-a') =>
  judgeOwner(record, { bootId, inspect, now: NOW, leaseMs: LEASE });

describe('judging whether an owner is alive', () => {
  it('a process frozen by sleep (lease long expired, same pid and start time) is alive', () => {
    expect(judge(owner({ heartbeatAt: NOW - 6 * 3_600_000 }))).toMatchObject({ alive: true });
  });

  it('a reused pid (same pid, another start time) is dead', () => {
    expect(judge(owner(), () => ({ kind: 'present', startTime: '999' }))).toMatchObject({ alive: false, reason: expect.stringMatching(/another process/) });
  });

  it('a pid that is gone, with the lease expired, is dead', () => {
    expect(judge(owner(), () => ({ kind: 'absent' }))).toMatchObject({ alive: false });
  });

  it('a pid that looks gone but still heartbeats (another pid namespace) is alive', () => {
    expect(judge(owner({ heartbeatAt: NOW - 1000 }), () => ({ kind: 'absent' }))).toMatchObject({ alive: true });
  });

  it('after a reboot the owner is dead, however fresh its heartbeat and whatever runs under its pid now', () => {
    expect(judge(owner({ heartbeatAt: NOW - 1000 }), sameProcess, 'boot-b')).toMatchObject({ alive: false, reason: 'its boot has ended' });
  });

  it('a heartbeat from the future (the clock was set back) is no evidence of life', () => {
    expect(judge(owner({ heartbeatAt: NOW + 3 * 3_600_000 }), () => ({ kind: 'absent' }))).toMatchObject({ alive: false });
    expect(judge(owner({ heartbeatAt: NOW + 3 * 3_600_000 }))).toMatchObject({ alive: true });
  });

  it('inside our pid namespace a gone pid is dead at once, whatever the lease says', () => {
    const fresh = owner({ heartbeatAt: NOW - 1, pidNamespace: 'pid:[1]' });
    const inOurs = (inspect: () => ProcessSighting) => judgeOwner(fresh, { bootId: 'boot-a', pidNamespace: 'pid:[1]', inspect, now: NOW, leaseMs: LEASE });
    expect(inOurs(() => ({ kind: 'absent' }))).toEqual({ alive: false, reason: 'pid 4242 is gone' });
    expect(inOurs(() => ({ kind: 'present', startTime: '999' }))).toMatchObject({ alive: false, reason: expect.stringMatching(/another process/) });
    // Another namespace: the same sighting proves nothing while the lease holds.
    expect(judgeOwner(fresh, { bootId: 'boot-a', pidNamespace: 'pid:[2]', inspect: () => ({ kind: 'absent' }), now: NOW, leaseMs: LEASE })).toMatchObject({ alive: true });
  });

  it('inside our pid namespace the same pid and start time are alive, however old the heartbeat', () => {
    const ancient = owner({ heartbeatAt: NOW - 30 * 86_400_000, pidNamespace: 'pid:[1]' });
    expect(judgeOwner(ancient, { bootId: 'boot-a', pidNamespace: 'pid:[1]', inspect: sameProcess, now: NOW, leaseMs: LEASE })).toEqual({ alive: true, reason: 'same process' });
  });

  it('a stopped instance, or one with no record left, is dead', () => {
    expect(judge(owner({ stoppedAt: NOW - 1, heartbeatAt: NOW }))).toMatchObject({ alive: false, reason: 'stopped' });
    expect(judge(undefined)).toMatchObject({ alive: false });
  });
});

describe('the system probe', () => {
  it('names this process by pid and start time, and sees the boot id on Linux', () => {
    const probe = createSystemProbe();
    const self = probe.self();
    expect(self.pid).toBe(process.pid);
    if (process.platform === 'linux') {
      expect(self.startTime).toMatch(/^\d+$/);
      expect(probe.bootId()).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(probe.inspect(process.pid)).toEqual({ kind: 'present', startTime: self.startTime });
  });

  it('sees a process killed with SIGKILL as absent once it has exited', async () => {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    const pid = child.pid!;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(createSystemProbe().inspect(pid).kind).toBe('present');
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    expect(createSystemProbe().inspect(pid)).toEqual({ kind: 'absent' });
  });
});

describe('pid reuse, with real processes and a real database', () => {
  it('a row whose recorded pid now belongs to a live, unrelated process is recognised as dead and claimed', async () => {
    const unrelated = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const probe = createSystemProbe();
      const sighting = probe.inspect(unrelated.pid!);
      expect(sighting.kind).toBe('present');
      const realStart = sighting.kind === 'present' ? sighting.startTime : null;

      const db = openTestDb();
      const clock = new ManualClock(Date.now());
      const insertOwner = db.prepare(
        `INSERT INTO ledger_instances (id, pid, process_start, boot_id, host, started_at, heartbeat_at)
         VALUES (?, ?, ?, ?, 'this-host', ?, ?)`,
      );
      const longAgo = clock.now() - 10 * 60_000;
      // The gateway that recorded the row had this pid, but started at another time:
      // the pid has since been reused by `sleep`.
      insertOwner.run('reused', unrelated.pid, `${realStart}0`, probe.bootId(), longAgo, longAgo);
      // Control: the same pid with its real start time is that process, alive.
      insertOwner.run('genuine', unrelated.pid, realStart, probe.bootId(), longAgo, longAgo);
      const recordAs = (instance: string, n: number) => {
        const input = reply(n);
        testLedger(db, clock, { newInstanceId: () => instance + '-tmp' }).recordObligation(input);
        db.prepare('UPDATE ledger_outbox SET owner_instance = ? WHERE id = ?').run(instance, input.obligationId);
        return input.obligationId;
      };
      const reusedRow = recordAs('reused', 1);
      const genuineRow = recordAs('genuine', 2);
      db.prepare("UPDATE ledger_instances SET stopped_at = ? WHERE id LIKE '%-tmp'").run(longAgo);

      const sweeper = testLedger(db, clock);
      const outcome = sweeper.sweepRecoverable({ now: clock.now(), deliverablePlatforms: [{ name: 'irc', serverIdempotency: false }] });
      expect(outcome.claimed.map((claim) => claim.id)).toEqual([reusedRow]);
      expect(sweeper.getDelivery(genuineRow)!.state).toBe('pending');
      db.close();
    } finally {
      unrelated.kill('SIGKILL');
    }
  });
});
