import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';

/** Between SIGTERM and SIGKILL when an agent program is stopped. */
export const DEFAULT_KILL_GRACE_MS = 2_000;
const STDERR_TAIL_BYTES = 2_048;

/** How to start a local agent program (the command and ACP agents). */
export interface AgentProgram {
  /** A program path or a name looked up in PATH. Never run through a shell. */
  readonly command: string;
  readonly args?: readonly string[] | undefined;
  readonly cwd?: string | undefined;
  /** Added to the gateway's environment. */
  readonly env?: Readonly<Record<string, string>> | undefined;
  /** Told of every process started, so one left behind by a crash can be killed later (process-records.ts). */
  readonly tracker?: ProcessTracker | undefined;
}

/** Keeps a durable note of a started agent process until it exits. */
export interface ProcessTracker {
  track(child: ChildProcess, command: string): void;
}

/**
 * Starts an agent program with piped stdio as the leader of its own process
 * group (detached), so stopProcessGroup stops whatever it starts too; keeps the
 * tail of its stderr, which usually says why it failed.
 */
export function spawnAgentProgram(program: AgentProgram): { child: ChildProcessWithoutNullStreams; stderr: TailBuffer } {
  const child = spawn(program.command, [...(program.args ?? [])], {
    cwd: program.cwd,
    env: { ...process.env, ...program.env },
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
    shell: false,
    windowsHide: true,
  });
  // At once, while the gateway still owns it: from here on a SIGKILL of the
  // gateway leaves a record the next start can act on.
  program.tracker?.track(child, program.command);
  const stderr = new TailBuffer(STDERR_TAIL_BYTES);
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  return { child, stderr };
}

/** How a program ended, with its stderr's tail: `exited with code 3: …`, `was killed by SIGKILL`. */
export function describeExit(code: number | null, signal: NodeJS.Signals | null, stderr: TailBuffer): string {
  const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
  const tail = stderr.text();
  return `${how}${tail ? `: ${tail}` : ''}`;
}

/**
 * Stops a child started with `detached: true` (so it leads its own process
 * group): SIGTERM to the whole group, then SIGKILL after `graceMs` if it has not
 * exited. The group matters because a command is often a wrapper (a shell
 * script, `npx`, a Python launcher) whose real worker is a grandchild; killing
 * only the wrapper would leave the worker running and holding the pipes open.
 *
 * Resolves once the direct child has exited.
 */
export function stopProcessGroup(child: ChildProcess, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) {
      // The leader is gone, but members of its group may still be alive.
      if (child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
      resolve();
      return;
    }
    const pid = child.pid;
    const timer = setTimeout(() => signalGroup(pid, 'SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      // Stragglers in the group that ignored SIGTERM do not outlive the leader.
      signalGroup(pid, 'SIGKILL');
      resolve();
    });
    signalGroup(pid, 'SIGTERM');
  });
}

/** Signals the process group led by `pid`, else `pid` alone; a group or process already gone is not an error. */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone. Fall back to the leader alone, in case
    // it was not a group leader after all (e.g. on a platform without groups).
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}

/** Keeps the last `maxBytes` of a stream (e.g. stderr) for error messages. */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > this.maxBytes && this.chunks.length > 1) {
      this.size -= this.chunks.shift()!.length;
    }
  }

  /** The last `maxBytes` as trimmed text. */
  text(): string {
    let buffer = Buffer.concat(this.chunks);
    if (buffer.length > this.maxBytes) buffer = buffer.subarray(buffer.length - this.maxBytes);
    return buffer.toString('utf8').trim();
  }
}
