import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../db/database';
import { homingMigrations } from '../db/migrations';
import { createSystemProbe } from '../ledger/process-identity';
import { silentLogger } from '../logger';
import { createAcpAgent } from './acp';
import type { Agent, AgentTurn } from './agent';
import { createAgent } from './create-agent';
import { listAgentProcesses, trackAgentProcesses } from './process-records';

const commandFixture = fileURLToPath(new URL('./fixtures/command-agent.mjs', import.meta.url));
const acpFixture = fileURLToPath(new URL('./fixtures/acp-agent.mjs', import.meta.url));
const probe = createSystemProbe();

let dir: string;
let db: Db;
const agents: Agent[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'homing-agent-processes-'));
  db = openDatabase(join(dir, 'homing.db'), { migrations: homingMigrations });
});

afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

function turn(text: string, signal: AbortSignal, onToken: (token: string) => void = () => {}): AgentTurn {
  return { sessionId: 's_records', history: [], message: { role: 'user', text }, onToken, signal };
}

async function until(condition: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('agent process records', () => {
  it("records a command agent's process (pid, start time, boot, this gateway) while its turn runs, and forgets it when it exits", async () => {
    const built = createAgent(
      { type: 'command', command: process.execPath, args: [commandFixture, 'slow'] },
      { processes: trackAgentProcesses({ db, logger: silentLogger }) },
    );
    if (!built.ok) throw new Error(built.error);
    agents.push(built.agent);
    let out = '';
    const controller = new AbortController();
    const result = built.agent.runTurn(turn('hi', controller.signal, (token) => (out += token)));
    await until(() => /pids \d+/.test(out));
    const pid = Number(/pids (\d+)/.exec(out)![1]);

    const self = probe.self();
    const inspected = probe.inspect(pid);
    expect(listAgentProcesses(db)).toEqual([
      expect.objectContaining({
        pid,
        processStart: inspected.kind === 'present' ? inspected.startTime : 'absent',
        bootId: probe.bootId(),
        ownerPid: process.pid,
        ownerStart: self.startTime,
        command: process.execPath,
      }),
    ]);

    controller.abort();
    expect(await result).toMatchObject({ ok: false, kind: 'cancelled' });
    await until(() => listAgentProcesses(db).length === 0);
  });

  it('leaves no record after a command turn that ends by itself, nor after one that cannot start', async () => {
    const tracker = trackAgentProcesses({ db, logger: silentLogger });
    const built = createAgent({ type: 'command', command: process.execPath, args: [commandFixture, 'echo'] }, { processes: tracker });
    const missing = createAgent({ type: 'command', command: '/nonexistent/agent', args: [] }, { processes: tracker });
    if (!built.ok || !missing.ok) throw new Error('not built');
    expect(await built.agent.runTurn(turn('hi', new AbortController().signal))).toMatchObject({ ok: true });
    expect(await missing.agent.runTurn(turn('hi', new AbortController().signal))).toMatchObject({ ok: false, kind: 'unreachable' });
    await until(() => listAgentProcesses(db).length === 0);
  });

  it('records the ACP agent process while it is kept running, and forgets it once closed', async () => {
    const agent = createAcpAgent({ command: process.execPath, args: [acpFixture], killGraceMs: 300, tracker: trackAgentProcesses({ db, logger: silentLogger }) });
    agents.push(agent);
    expect(await agent.runTurn(turn('hello', new AbortController().signal))).toMatchObject({ ok: true });
    expect(listAgentProcesses(db)).toHaveLength(1);

    await agent.close();
    await until(() => listAgentProcesses(db).length === 0);
  });

  it('lets the turn run when the record cannot be written (best effort, like the ledger)', async () => {
    db.exec('DROP TABLE agent_processes');
    const built = createAgent(
      { type: 'command', command: process.execPath, args: [commandFixture, 'echo'] },
      { processes: trackAgentProcesses({ db, logger: silentLogger }) },
    );
    if (!built.ok) throw new Error(built.error);
    expect(await built.agent.runTurn(turn('hi', new AbortController().signal))).toMatchObject({ ok: true });
  });
});
