import { readdirSync, readFileSync } from 'node:fs';

/** A process, identified by pid and start time (a reused pid is another process). */
export interface ProcessId {
  readonly pid: number;
  readonly start: string;
}

/**
 * This run's agent processes alive now: every process whose argv contains
 * `marker` (the run id the harness passes to its agent fixture), found in /proc.
 * Zombies count as gone: they run nothing.
 */
export function agentProcesses(marker: string): ProcessId[] {
  const found: ProcessId[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return found; // no /proc: nothing to count
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (!cmdline.split('\0').includes(marker)) continue;
      const start = startTime(Number(entry));
      if (start !== undefined) found.push({ pid: Number(entry), start });
    } catch {
      // Gone between the listing and the read.
    }
  }
  return found;
}

/** The process's start time in clock ticks since boot (field 22 of /proc/pid/stat), or undefined if it is gone or a zombie. */
export function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
    return fields[19];
  } catch {
    return undefined;
  }
}

export function stillAlive(process: ProcessId): boolean {
  return startTime(process.pid) === process.start;
}

/** SIGKILL for each of these processes still alive (by pid, checked against its start time). */
export function killAll(processes: readonly ProcessId[]): void {
  for (const one of processes) {
    if (!stillAlive(one)) continue;
    try {
      process.kill(one.pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}
