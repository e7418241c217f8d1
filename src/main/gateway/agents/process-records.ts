import type { ChildProcess } from 'node:child_process';
import { cachedStatement, type Db } from '../db/database';
import { createSystemProbe, type ProcessIdentity, type ProcessProbe } from '../ledger/process-identity';
import type { Logger } from '../logger';
import type { ProcessTracker } from './process-group';
import { agentWatchdog, type AgentWatchdog } from './watchdog';

/** One row of agent_processes: an agent process some gateway started and has not seen exit. */
export interface AgentProcessRecord {
  readonly id: number;
  readonly pid: number;
  /** As the probe reads it (ticks since boot on Linux); null where the OS cannot tell. */
  readonly processStart: string | null;
  readonly bootId: string | null;
  /** The gateway process that started it. */
  readonly ownerPid: number;
  readonly ownerStart: string | null;
  readonly command: string;
  readonly startedAt: number;
}

interface RecordRowSql {
  id: number;
  pid: number;
  process_start: string | null;
  boot_id: string | null;
  owner_pid: number;
  owner_start: string | null;
  command: string;
  started_at: number;
}

export interface ProcessRecordsOptions {
  readonly db: Db;
  readonly logger: Logger;
  readonly probe?: ProcessProbe | undefined;
  readonly now?: (() => number) | undefined;
  /** Kills the agents at once if this process dies; default: the process's own (none under Electron). */
  readonly watchdog?: AgentWatchdog | undefined;
}

/**
 * Records each agent process in homing.db while it runs: a row on spawn, deleted
 * on exit. A gateway killed with SIGKILL cannot stop its agents (they lead their
 * own process groups, and a command agent's stdin is already closed, so nothing
 * tells it), and the rows it leaves behind are how the next start finds them
 * (reap-orphans.ts). Each process is also handed to the watchdog, which kills
 * it the moment this process dies (watchdog.ts), so the records are the
 * fallback for when the watchdog dies too.
 *
 * Best effort, like the ledger: a failed write is logged and the turn goes on.
 * A missing row only means a crash could leave that one process running; a row
 * left after its process exited is harmless (the reaper sees the pid gone or
 * reused and drops it).
 */
export function trackAgentProcesses(options: ProcessRecordsOptions): ProcessTracker {
  const { db, logger } = options;
  const probe = options.probe ?? createSystemProbe();
  const now = options.now ?? Date.now;
  const watchdog = 'watchdog' in options ? options.watchdog : agentWatchdog();
  let owner: ProcessIdentity | undefined;
  return {
    track(child: ChildProcess, command: string) {
      // No pid: the spawn failed (ENOENT, EACCES) and nothing runs.
      if (child.pid === undefined) return;
      owner ??= probe.self();
      const pid = child.pid;
      const sighting = probe.inspect(pid);
      const startTime = sighting.kind === 'present' ? sighting.startTime : null;
      watchdog?.watch(pid, startTime);
      child.once('exit', () => watchdog?.unwatch(pid));
      let id: number | undefined;
      try {
        id = Number(
          cachedStatement(
            db,
            `INSERT INTO agent_processes (pid, process_start, boot_id, owner_pid, owner_start, command, started_at)
             VALUES (?, ?, ?, ?, ?, ?, ?)`,
          ).run(pid, startTime, probe.bootId(), owner.pid, owner.startTime, command, now())
            .lastInsertRowid,
        );
      } catch (error) {
        logger.warn('could not record an agent process (a crash now could leave it running)', { pid, error });
        return;
      }
      // 'exit', not 'close': the process is gone even if a grandchild holds its pipes.
      child.once('exit', () => {
        try {
          cachedStatement(db, 'DELETE FROM agent_processes WHERE id = ?').run(id);
        } catch (error) {
          // The database may be closed already (a stop); the next start drops the row.
          logger.debug('could not forget an agent process that exited', { pid, error });
        }
      });
    },
  };
}

export function listAgentProcesses(db: Db): AgentProcessRecord[] {
  const rows = db.prepare('SELECT * FROM agent_processes ORDER BY id').all() as RecordRowSql[];
  return rows.map((row) => ({
    id: row.id,
    pid: row.pid,
    processStart: row.process_start,
    bootId: row.boot_id,
    ownerPid: row.owner_pid,
    ownerStart: row.owner_start,
    command: row.command,
    startedAt: row.started_at,
  }));
}

export function forgetAgentProcess(db: Db, id: number): void {
  db.prepare('DELETE FROM agent_processes WHERE id = ?').run(id);
}
