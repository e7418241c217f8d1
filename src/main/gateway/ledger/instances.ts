import type { Db } from '../db/database';
import type { InstanceRecord } from './liveness';
import type { ProcessIdentity } from './process-identity';

interface InstanceRowSql {
  id: string;
  pid: number;
  process_start: string | null;
  boot_id: string | null;
  host: string;
  started_at: number;
  heartbeat_at: number;
  stopped_at: number | null;
  pid_ns: string | null;
}

/** Records this process as an instance that may own obligations. */
export function registerInstance(db: Db, id: string, identity: ProcessIdentity, now: number): void {
  db.prepare(
    `INSERT INTO ledger_instances (id, pid, process_start, boot_id, host, started_at, heartbeat_at, pid_ns)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(id, identity.pid, identity.startTime, identity.bootId, identity.host, now, now, identity.pidNamespace ?? null);
}

/**
 * Called by the process that has just taken the data directory's lock: no other
 * gateway can be running, so every instance not marked stopped died without
 * saying so. Their rows become claimable at once, with no lease to wait out.
 */
export function takeOverInstances(db: Db, now: number): number {
  return db.prepare('UPDATE ledger_instances SET stopped_at = ? WHERE stopped_at IS NULL').run(now).changes;
}

/**
 * Renews the lease. Returns false when the row is gone or was declared dead (a
 * sweeper judged this instance dead): the caller re-registers under a new id
 * rather than reviving a verdict that others may already have acted on.
 */
export function heartbeat(db: Db, id: string, now: number): boolean {
  return db.prepare('UPDATE ledger_instances SET heartbeat_at = ? WHERE id = ? AND stopped_at IS NULL').run(now, id).changes === 1;
}

/** A clean stop: from now on this instance is dead without any probing. */
export function stopInstance(db: Db, id: string, now: number): void {
  db.prepare('UPDATE ledger_instances SET stopped_at = ? WHERE id = ? AND stopped_at IS NULL').run(now, id);
}

export function loadInstance(db: Db, id: string): InstanceRecord | undefined {
  const row = db.prepare('SELECT * FROM ledger_instances WHERE id = ?').get(id) as InstanceRowSql | undefined;
  return row && toRecord(row);
}

/** Tombstones an owner judged dead, so later sweeps need not probe it again. */
export function declareDead(db: Db, id: string, now: number): void {
  stopInstance(db, id, now);
}

/**
 * Deletes instances stopped (or declared dead) before `before`. A row whose
 * owner record is gone counts as owned by a dead instance, which is what it was.
 */
export function pruneInstances(db: Db, before: number): number {
  return db.prepare('DELETE FROM ledger_instances WHERE stopped_at IS NOT NULL AND stopped_at < ?').run(before).changes;
}

function toRecord(row: InstanceRowSql): InstanceRecord {
  return {
    id: row.id,
    pid: row.pid,
    processStart: row.process_start,
    bootId: row.boot_id,
    host: row.host,
    startedAt: row.started_at,
    heartbeatAt: row.heartbeat_at,
    stoppedAt: row.stopped_at,
    pidNamespace: row.pid_ns,
  };
}
