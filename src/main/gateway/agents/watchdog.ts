import { spawn, type ChildProcess } from 'node:child_process';

/**
 * A small helper process that SIGKILLs the agents' process groups the moment the
 * gateway dies, however it dies. The agents lead their own process groups (so a
 * stop reaches the helpers they start), which also means a SIGKILL of the
 * gateway does not reach them, and a command agent's stdin is already closed,
 * so nothing tells it. The watchdog holds a pipe from the gateway: the kernel
 * closes it when the gateway exits, and at that EOF it kills whatever it was
 * told is still running. It runs in its own session too, so a Ctrl-C aimed at
 * the gateway's terminal reaches only the gateway, which stops its agents itself.
 *
 * This is the fast path, not the guarantee: the watchdog can be killed as well
 * (an OOM kill of both, `kill -9 -1`). The records in homing.db and the kill at
 * the next start (reap-orphans.ts) are the guarantee.
 *
 * It checks the start time on Linux before it kills, as the reaper does: the
 * gateway reaps its children, so a pid told to the watchdog can be reused in the
 * moment between an agent's exit and the gateway's "-" line.
 */
const WATCHDOG_SOURCE = String.raw`
const fs = require('fs');
const watched = new Map();
let pending = '';
const startOf = (pid) => {
  try {
    const stat = fs.readFileSync('/proc/' + pid + '/stat', 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
};
const killAll = () => {
  const proc = fs.existsSync('/proc/self/stat');
  for (const [pid, start] of watched) {
    if (proc && (start === '-' || startOf(pid) !== start)) continue;
    try { process.kill(-pid, 'SIGKILL'); } catch { try { process.kill(pid, 'SIGKILL'); } catch {} }
  }
  process.exit(0);
};
process.stdin.setEncoding('utf8');
process.stdin.on('data', (data) => {
  pending += data;
  let end;
  while ((end = pending.indexOf('\n')) >= 0) {
    const [op, pid, start] = pending.slice(0, end).split(' ');
    pending = pending.slice(end + 1);
    if (op === '+') watched.set(Number(pid), start);
    else watched.delete(Number(pid));
  }
});
process.stdin.on('end', killAll);
process.stdin.on('error', killAll);
`;

export interface AgentWatchdog {
  /** `startTime` as the process probe reads it; null where unknown (then, on Linux, it is not killed). */
  watch(pid: number, startTime: string | null): void;
  unwatch(pid: number): void;
}

let shared: AgentWatchdog | undefined;

/**
 * The process's watchdog, started on first use. Only under plain Node (the
 * headless gateway, tests): under Electron `process.execPath` is the app, which
 * runs a script only with ELECTRON_RUN_AS_NODE, a switch packagers can turn off;
 * there the supervisor restarts a crashed gateway at once, and that start kills
 * the orphans.
 */
export function agentWatchdog(): AgentWatchdog | undefined {
  if (process.versions.electron !== undefined || process.platform === 'win32') return undefined;
  shared ??= createWatchdog();
  return shared;
}

function createWatchdog(): AgentWatchdog {
  let child: ChildProcess | undefined;
  const running = (): boolean => child !== undefined && child.exitCode === null && child.signalCode === null;
  return {
    watch(pid, startTime) {
      // A watchdog that died is replaced; what it knew is lost, and the reaper covers that.
      if (!running()) child = start();
      child!.stdin!.write(`+ ${pid} ${startTime ?? '-'}\n`);
    },
    unwatch(pid) {
      if (running()) child!.stdin!.write(`- ${pid}\n`);
    },
  };
}

function start(): ChildProcess {
  const child = spawn(process.execPath, ['-e', WATCHDOG_SOURCE], {
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
    windowsHide: true,
  });
  // If it cannot start or dies, the gateway goes on: the next start's reaper still kills orphans.
  child.on('error', () => undefined);
  child.stdin!.on('error', () => undefined);
  // It must never keep a stopping gateway alive.
  child.unref();
  (child.stdin as unknown as { unref?: () => void }).unref?.();
  return child;
}
