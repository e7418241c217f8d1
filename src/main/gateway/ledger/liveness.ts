import type { ProcessSighting } from './process-identity';

/** An instance row as the ledger stores it. */
export interface InstanceRecord {
  readonly id: string;
  readonly pid: number;
  readonly processStart: string | null;
  readonly bootId: string | null;
  readonly host: string;
  readonly startedAt: number;
  readonly heartbeatAt: number;
  readonly stoppedAt: number | null;
  /** The owner's pid namespace (Linux), when it could tell. */
  readonly pidNamespace?: string | null;
}

export type OwnerVerdict = { readonly alive: true; readonly reason: string } | { readonly alive: false; readonly reason: string };

export interface JudgeContext {
  /** This machine's current boot id, or null where the OS has none. */
  readonly bootId: string | null;
  /** This process's pid namespace, or null where the OS has none. */
  readonly pidNamespace?: string | null;
  readonly inspect: (pid: number) => ProcessSighting;
  readonly now: number;
  readonly leaseMs: number;
}

/**
 * Is the owner of a row still alive? Two kinds of evidence, each covering the
 * other's blind spot:
 *
 * - The heartbeat lease is clock evidence. It is wrong after a sleep (every
 *   process was frozen, so every lease has expired though everyone is alive), after
 *   SIGSTOP, and after a wall-clock jump. So an expired lease alone never kills.
 * - The process check is OS evidence: pid + the process's start time + the boot
 *   id. A pid is reused, and pids restart at each boot, so a bare "pid exists"
 *   proves nothing; pid + start time names one process, and on Linux the start
 *   time is counted in ticks since boot, so it only compares within one boot.
 *   It is wrong when the owner lives in another pid namespace (a Flatpak or a
 *   container sharing the data directory sees other pids), so "pid absent" alone
 *   never kills a process that is still heartbeating.
 *
 * Hence: dead when the lease has expired AND the process is provably gone (pid
 * absent, or present with another start time). A different boot id is proof on
 * its own — no process survives a reboot, and the boot id is kernel-wide, the
 * same in every namespace — so a reboot never makes a fresh-looking heartbeat
 * (a quick reboot, a clock set back) keep a dead owner alive. A heartbeat in the
 * future beyond one lease means the clock went back, and counts as no evidence.
 *
 * Inside one pid namespace (the owner recorded the same namespace as ours) the
 * process check is exact, so it decides at once, lease or no lease: a gone pid,
 * or a pid with another start time, is a dead owner the moment it is seen, and
 * the same pid with the same start time is alive however old its heartbeat (it
 * was asleep or stopped). That is what lets a restart take over in milliseconds.
 *
 * The host name is not consulted: SQLite's WAL cannot be shared between hosts,
 * and host names change (DHCP); the boot id and the start time already tell a
 * copied data directory's owners from ours.
 */
export function judgeOwner(owner: InstanceRecord | undefined, context: JudgeContext): OwnerVerdict {
  if (!owner) return { alive: false, reason: 'no instance record (declared dead earlier)' };
  if (owner.stoppedAt !== null) return { alive: false, reason: 'stopped' };
  if (owner.bootId !== null && context.bootId !== null && owner.bootId !== context.bootId) {
    return { alive: false, reason: 'its boot has ended' };
  }
  const sameNamespace =
    owner.pidNamespace != null && context.pidNamespace != null && owner.pidNamespace === context.pidNamespace &&
    owner.processStart !== null;
  if (sameNamespace) {
    const seen = context.inspect(owner.pid);
    if (seen.kind === 'absent') return { alive: false, reason: `pid ${owner.pid} is gone` };
    if (seen.startTime !== null) {
      return seen.startTime === owner.processStart
        ? { alive: true, reason: 'same process' }
        : { alive: false, reason: `pid ${owner.pid} now belongs to another process` };
    }
  }
  const age = context.now - owner.heartbeatAt;
  if (age <= context.leaseMs && age >= -context.leaseMs) return { alive: true, reason: 'heartbeat within its lease' };

  const sighting = context.inspect(owner.pid);
  switch (sighting.kind) {
    case 'absent':
      return { alive: false, reason: `pid ${owner.pid} is gone` };
    case 'present':
      if (sighting.startTime !== null && owner.processStart !== null) {
        return sighting.startTime === owner.processStart
          ? { alive: true, reason: 'same process (asleep or stopped), lease expired' }
          : { alive: false, reason: `pid ${owner.pid} now belongs to another process` };
      }
      // No start time on this OS: the expired lease is all the evidence there is.
      // A wrongly claimed row is still safe to the user: its in-flight chunk is
      // resent with the marker.
      return { alive: false, reason: `lease expired and pid ${owner.pid} cannot be told apart` };
  }
}
