import type { Db } from '../db/database';
import { createSystemProbe, type ProcessProbe } from '../ledger/process-identity';
import type { Logger } from '../logger';
import { signalGroup } from './process-group';
import { forgetAgentProcess, listAgentProcesses, type AgentProcessRecord } from './process-records';

/** What happened to one record. */
export type OrphanVerdict =
  /** Still the very process that was recorded, and its gateway is gone: its group got SIGKILL. */
  | 'killed'
  /** Its gateway is still running (another process on this data directory): left alone. */
  | 'owner alive'
  /** Exited, its pid reused, or from an earlier boot: nothing to kill. */
  | 'gone'
  /** The OS cannot tell its start time, so a reused pid cannot be ruled out: not killed. */
  | 'unknown';

export interface ReapReport {
  readonly killed: number;
  readonly cleared: number;
  readonly kept: number;
}

/**
 * Kills the agent processes a previous gateway on this data directory started
 * and never saw exit: it was killed (SIGKILL, a crash, a power cut of the
 * gateway alone) and they kept running in their own process groups. Run at
 * start, before any turn: an interrupted turn is re-run after this, and must
 * not run beside its still-running first attempt.
 *
 * A process is killed only when it is provably the recorded one — the same pid
 * AND the same start time AND the same boot — and its gateway is provably gone
 * (its pid absent, or now another process). A pid is reused; killing on a bare
 * pid could hit anything the user runs. Records are cleared except a live
 * owner's.
 */
export function reapOrphanedAgents(db: Db, logger: Logger, probe: ProcessProbe = createSystemProbe()): ReapReport {
  let records: AgentProcessRecord[];
  try {
    records = listAgentProcesses(db);
  } catch (error) {
    logger.error('could not read the agent process records; agents left by a crash may still run', { error });
    return { killed: 0, cleared: 0, kept: 0 };
  }
  let killed = 0;
  let cleared = 0;
  let kept = 0;
  for (const record of records) {
    const verdict = judgeOrphan(record, probe);
    if (verdict === 'owner alive') {
      kept += 1;
      continue;
    }
    if (verdict === 'killed') {
      signalGroup(record.pid, 'SIGKILL');
      killed += 1;
      logger.warn('killed an agent process left running by a gateway that did not stop', {
        pid: record.pid,
        command: record.command,
        startedAt: record.startedAt,
      });
    } else if (verdict === 'unknown') {
      logger.warn('an agent process left by a crash may still run; its start time cannot be checked, so it was not killed', {
        pid: record.pid,
        command: record.command,
      });
    }
    try {
      forgetAgentProcess(db, record.id);
      cleared += 1;
    } catch (error) {
      logger.warn('could not clear an agent process record', { pid: record.pid, error });
    }
  }
  return { killed, cleared, kept };
}

/** The decision for one record, without acting on it. */
export function judgeOrphan(record: AgentProcessRecord, probe: ProcessProbe): OrphanVerdict {
  const bootId = probe.bootId();
  // Nothing survives a reboot, and after one the pids (and Linux start times) start over.
  if (record.bootId !== null && bootId !== null && record.bootId !== bootId) return 'gone';
  if (ownerAlive(record, probe)) return 'owner alive';
  const sighting = probe.inspect(record.pid);
  if (sighting.kind === 'absent') return 'gone';
  if (record.processStart === null || sighting.startTime === null) return 'unknown';
  return sighting.startTime === record.processStart ? 'killed' : 'gone';
}

/**
 * The recording gateway is alive when its pid is there with the same start time.
 * An unknown start time counts as alive: killing a live gateway's agent would
 * break its turn, while sparing an orphan only wastes its run.
 */
function ownerAlive(record: AgentProcessRecord, probe: ProcessProbe): boolean {
  const sighting = probe.inspect(record.ownerPid);
  if (sighting.kind === 'absent') return false;
  if (record.ownerStart === null || sighting.startTime === null) return true;
  return sighting.startTime === record.ownerStart;
}
