import { execFileSync } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/** What this machine says about one pid right now. */
export type ProcessSighting =
  | { readonly kind: 'absent' }
  /** startTime is null when the OS cannot tell (then only the lease can judge). */
  | { readonly kind: 'present'; readonly startTime: string | null };

/** The identity a process instance records about itself. */
export interface ProcessIdentity {
  readonly pid: number;
  readonly startTime: string | null;
  readonly bootId: string | null;
  readonly host: string;
  /** The pid namespace (Linux: the inode of /proc/self/ns/pid), or null. */
  readonly pidNamespace?: string | null;
}

/** How the ledger looks at processes; injected so tests can stage any machine. */
export interface ProcessProbe {
  self(): ProcessIdentity;
  /** The current boot's id, or null where the OS has none. */
  bootId(): string | null;
  /** This process's pid namespace, or null where the OS has none (absent: unknown). */
  pidNamespace?(): string | null;
  inspect(pid: number): ProcessSighting;
}

/**
 * The real probe.
 * - Linux: the start time is field 22 of /proc/<pid>/stat (clock ticks since
 *   boot) — only comparable within one boot, hence the boot id from
 *   /proc/sys/kernel/random/boot_id, which changes at every boot.
 * - Other POSIX systems (macOS, BSD): `ps -o lstart=` gives an absolute start
 *   time, comparable across boots, and there is no boot id.
 * - Elsewhere (Windows): only "is there a process with this pid"
 *   (`process.kill(pid, 0)`); the start time is unknown and the lease decides.
 */
export function createSystemProbe(platform: NodeJS.Platform = process.platform): ProcessProbe {
  const bootId = platform === 'linux' ? readBootId() : null;
  const pidNamespace = platform === 'linux' ? readPidNamespace() : null;
  const inspect = (pid: number): ProcessSighting => {
    if (platform === 'linux') return inspectLinux(pid);
    if (platform !== 'win32') return inspectPs(pid);
    return signalZero(pid) ? { kind: 'present', startTime: null } : { kind: 'absent' };
  };
  return {
    bootId: () => bootId,
    pidNamespace: () => pidNamespace,
    inspect,
    self() {
      const sighting = inspect(process.pid);
      return {
        pid: process.pid,
        startTime: sighting.kind === 'present' ? sighting.startTime : null,
        bootId,
        host: hostname(),
        pidNamespace,
      };
    },
  };
}

function readPidNamespace(): string | null {
  try {
    return readlinkSync('/proc/self/ns/pid') || null;
  } catch {
    return null;
  }
}

function readBootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
  } catch {
    return null;
  }
}

function inspectLinux(pid: number): ProcessSighting {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    // /proc may hide other users' processes (hidepid); a signal still tells.
    return signalZero(pid) ? { kind: 'present', startTime: null } : { kind: 'absent' };
  }
  // The command name (field 2) is in parentheses and may itself contain spaces
  // and parentheses: count fields from the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  // A zombie (Z) or dead (X) process has exited: its pid is only waiting to be reaped.
  if (state === 'Z' || state === 'X') return { kind: 'absent' };
  return { kind: 'present', startTime: fields[19] ?? null }; // field 22 overall
}

function inspectPs(pid: number): ProcessSighting {
  try {
    const out = execFileSync('ps', ['-o', 'lstart=', '-p', String(pid)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 2000,
    }).trim();
    return out ? { kind: 'present', startTime: out } : { kind: 'absent' };
  } catch {
    // ps exits 1 when the pid does not exist; if ps itself is missing, fall back.
    return signalZero(pid) ? { kind: 'present', startTime: null } : { kind: 'absent' };
  }
}

function signalZero(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
