import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../db/database';
import { homingMigrations } from '../db/migrations';
import { createSystemProbe, type ProcessProbe } from '../ledger/process-identity';
import { silentLogger } from '../logger';
import { isAlive } from '../../../../test/support/processes';
import { signalGroup, spawnAgentProgram } from './process-group';
import { listAgentProcesses, trackAgentProcesses } from './process-records';
import { reapOrphanedAgents } from './reap-orphans';

const fixture = fileURLToPath(new URL('./fixtures/command-agent.mjs', import.meta.url));
const probe = createSystemProbe();

/** The gateway that started the agents, as a previous (now gone) process: this pid, another start time. */
const deadGateway: ProcessProbe = {
  ...probe,
  self: () => ({ ...probe.self(), startTime: 'a process that has exited' }),
};

let dir: string;
let db: Db;
const spawned: number[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'homing-reap-'));
  db = openDatabase(join(dir, 'homing.db'), { migrations: homingMigrations });
});

afterEach(() => {
  for (const pid of spawned.splice(0)) signalGroup(pid, 'SIGKILL');
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A real process that runs until killed, in its own process group like an agent. */
async function sleeper(): Promise<{ pid: number; startTime: string }> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore' });
  await new Promise((resolve) => child.once('spawn', resolve));
  const pid = child.pid!;
  spawned.push(pid);
  const sighting = probe.inspect(pid);
  if (sighting.kind !== 'present' || sighting.startTime === null) throw new Error('cannot read the start time here');
  return { pid, startTime: sighting.startTime };
}

function insert(fields: { pid: number; processStart: string | null; bootId?: string | null; ownerStart?: string | null }): void {
  db.prepare(
    `INSERT INTO agent_processes (pid, process_start, boot_id, owner_pid, owner_start, command, started_at)
     VALUES (?, ?, ?, ?, ?, 'test-agent', 0)`,
  ).run(fields.pid, fields.processStart, fields.bootId === undefined ? probe.bootId() : fields.bootId, process.pid, fields.ownerStart === undefined ? 'gone' : fields.ownerStart);
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls: a killed process is torn down by the kernel (and reaped by its parent) a moment later. */
async function within(ms: number, condition: () => boolean): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await pause(20);
  }
  return true;
}

const stillAliveAfter = async (pid: number, ms: number) => {
  await pause(ms);
  return isAlive(pid);
};

describe.skipIf(process.platform !== 'linux')('killing agent processes a killed gateway left running', () => {
  it('kills a recorded agent and its whole process group when it is still the same process and its gateway is gone', async () => {
    // Started as the command agent starts it, recorded by a gateway that has since died.
    const { child } = spawnAgentProgram({ command: process.execPath, args: [fixture, 'slow'], tracker: trackAgentProcesses({ db, logger: silentLogger, probe: deadGateway }) });
    spawned.push(child.pid!);
    let out = '';
    child.stdout.on('data', (data: Buffer) => (out += data.toString()));
    expect(await within(5_000, () => /pids \d+ \d+/.test(out))).toBe(true);
    const [, leader, grandchild] = /pids (\d+) (\d+)/.exec(out)!.map(Number);

    expect(listAgentProcesses(db).map((record) => record.pid)).toEqual([leader]);
    expect(reapOrphanedAgents(db, silentLogger)).toEqual({ killed: 1, cleared: 1, kept: 0 });

    expect(await within(3_000, () => !isAlive(leader!))).toBe(true);
    expect(await within(3_000, () => !isAlive(grandchild!))).toBe(true);
    expect(listAgentProcesses(db)).toEqual([]);
  });

  it('never kills a recorded pid that now belongs to another process (another start time), and drops the record', async () => {
    const other = await sleeper();
    // The agent once had this pid; it exited and the pid went to an unrelated program.
    insert({ pid: other.pid, processStart: String(Number(other.startTime) - 1) });

    expect(reapOrphanedAgents(db, silentLogger)).toEqual({ killed: 0, cleared: 1, kept: 0 });
    expect(await stillAliveAfter(other.pid, 300)).toBe(true);
    expect(listAgentProcesses(db)).toEqual([]);
  });

  it('never kills a process recorded in another boot, even with the same pid and start time', async () => {
    const other = await sleeper();
    insert({ pid: other.pid, processStart: other.startTime, bootId: 'an earlier boot' });

    expect(reapOrphanedAgents(db, silentLogger)).toEqual({ killed: 0, cleared: 1, kept: 0 });
    expect(await stillAliveAfter(other.pid, 300)).toBe(true);
  });

  it('never kills a process whose start time was not known when it was recorded', async () => {
    const other = await sleeper();
    insert({ pid: other.pid, processStart: null });

    expect(reapOrphanedAgents(db, silentLogger)).toEqual({ killed: 0, cleared: 1, kept: 0 });
    expect(await stillAliveAfter(other.pid, 300)).toBe(true);
  });

  it("leaves a running gateway's agents and their records alone (another gateway on the same data directory)", async () => {
    const agent = await sleeper();
    insert({ pid: agent.pid, processStart: agent.startTime, ownerStart: probe.self().startTime });

    expect(reapOrphanedAgents(db, silentLogger)).toEqual({ killed: 0, cleared: 0, kept: 1 });
    expect(await stillAliveAfter(agent.pid, 300)).toBe(true);
    expect(listAgentProcesses(db)).toHaveLength(1);
  });

  it('drops the record of an agent that has exited', async () => {
    const exited = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    await new Promise((resolve) => exited.once('exit', resolve));
    insert({ pid: exited.pid!, processStart: '1' });

    expect(reapOrphanedAgents(db, silentLogger)).toEqual({ killed: 0, cleared: 1, kept: 0 });
    expect(listAgentProcesses(db)).toEqual([]);
  });
});
