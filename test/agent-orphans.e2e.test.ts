import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { connectApi, type ApiSocket } from './support/api-socket';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { isAlive } from './support/processes';
import { waitUntil } from './support/wait';

/**
 * The real headless gateway (built by `npm run build`) with a command agent that
 * is mid-turn when the gateway gets SIGKILL. The agent leads its own process
 * group and its stdin is closed, so the kill does not reach it: the gateway's
 * watchdog must, and if that died too, the next gateway on the same data
 * directory, before it re-runs the interrupted turn.
 */

const REPLY_AGENT = fileURLToPath(new URL('./fixtures/reply-agent.mjs', import.meta.url));

describe.skipIf(process.platform !== 'linux')('agent processes left running by a killed gateway', () => {
  const gateways: RunningGateway[] = [];
  const sockets: ApiSocket[] = [];
  const dirs: string[] = [];

  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.close();
    for (const gateway of gateways.splice(0)) await gateway.kill();
    for (const dir of dirs.splice(0)) {
      for (const pid of agentPids(join(dir, 'started'))) killIfReplyAgent(pid);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  async function start(dataDir: string): Promise<{ gateway: RunningGateway; api: ApiSocket }> {
    const gateway = await startHeadlessGateway(['--data-dir', dataDir]);
    gateways.push(gateway);
    const api = await connectApi(gateway);
    sockets.push(api);
    return { gateway, api };
  }

  /** A gateway whose command agent is mid-turn (it sleeps: its go file never appears). */
  async function gatewayWithSleepingAgent(): Promise<{ dataDir: string; startedFile: string; gateway: RunningGateway; agentPid: number }> {
    const dataDir = mkdtempSync(join(tmpdir(), 'homing-orphans-'));
    dirs.push(dataDir);
    const startedFile = join(dataDir, 'started');
    const agent = { type: 'command', command: process.execPath, args: [REPLY_AGENT, '--started', startedFile, '--wait-for', join(dataDir, 'never')] };
    writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ agent }));
    const { gateway, api } = await start(dataDir);
    await api.call('sendLocalMessage', { text: 'a long question' });
    await waitUntil('the agent to start its turn', () => agentPids(startedFile).length === 1, 10_000);
    return { dataDir, startedFile, gateway, agentPid: agentPids(startedFile)[0]! };
  }

  async function crash(gateway: RunningGateway): Promise<void> {
    await gateway.kill();
    gateways.splice(gateways.indexOf(gateway), 1);
    expect(gateway.child.signalCode).toBe('SIGKILL');
  }

  it('die within 3 s of a SIGKILL of the gateway, with no restart (its watchdog kills them)', async () => {
    const { gateway, agentPid } = await gatewayWithSleepingAgent();
    await crash(gateway);
    await waitUntil('the agent to be killed', () => !isAlive(agentPid), 3_000);
  });

  it('are killed by the next gateway on the same data directory when the watchdog died too, before the interrupted turn runs again', async () => {
    const { dataDir, startedFile, gateway, agentPid } = await gatewayWithSleepingAgent();
    // As when both are killed at once (an OOM kill, kill -9 -1): only the records are left.
    const watchdogs = childrenOf(gateway.child.pid!).filter((pid) => cmdline(pid).includes('killAll'));
    expect(watchdogs).toHaveLength(1);
    process.kill(watchdogs[0]!, 'SIGKILL');
    await waitUntil('the watchdog to die', () => !isAlive(watchdogs[0]!), 3_000);
    await crash(gateway);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(isAlive(agentPid)).toBe(true); // SIGKILL reached the gateway alone

    // The kill is issued as the new gateway opens its database, before it serves
    // anything or runs a turn; 3 s more is for the kernel to tear the process
    // down. (Counted from spawn it is the CLI's boot time: ~0.5 s idle, but over
    // 3 s on a loaded 2-core machine, so that bound would only measure the load.)
    await start(dataDir);
    await waitUntil('the old agent to be killed', () => !isAlive(agentPid), 3_000);

    // The interrupted turn runs again, in a new process, and the old one is not beside it.
    await waitUntil('the interrupted turn to run again', () => agentPids(startedFile).length === 2, 10_000);
    expect(agentPids(startedFile)[1]).not.toBe(agentPid);
    expect(isAlive(agentPid)).toBe(false);
  });
});

/** The pids whose parent is `parent` (Linux /proc). */
function childrenOf(parent: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent;
      } catch {
        return false;
      }
    });
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

function agentPids(startedFile: string): number[] {
  if (!existsSync(startedFile)) return [];
  return readFileSync(startedFile, 'utf8')
    .trim()
    .split('\n')
    .map((line) => Number(/^started (\d+)/.exec(line)?.[1]))
    .filter((pid) => pid > 0);
}

/** Cleanup after a failure: only a process that is still this test's agent (pids are reused). */
function killIfReplyAgent(pid: number): void {
  try {
    if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('reply-agent.mjs')) process.kill(pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}
