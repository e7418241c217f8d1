import type { ChildProcess } from 'node:child_process';

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

function signalGroup(pid: number, signal: NodeJS.Signals): void {
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
