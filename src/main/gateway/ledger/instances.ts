import type { Db } from '../db/database';
import { OWED, OWED_ROWS } from './states';
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
export function takeOverInstances(db: Db, now: number, bootId: string | null): { readonly instances: number; readonly fromAnotherBoot: number } {
  // An instance that died on another boot (or on a machine whose boot is unknown)
  // may have died with the machine: its newest unfsynced commits may be lost.
  const fromAnotherBoot = (
    db.prepare('SELECT count(*) AS n FROM ledger_instances WHERE stopped_at IS NULL AND (boot_id IS NOT ? OR ? IS NULL)').get(bootId, bootId) as {
      n: number;
    }
  ).n;
  const instances = db.prepare('UPDATE ledger_instances SET stopped_at = ? WHERE stopped_at IS NULL').run(now).changes;
  return { instances, fromAnotherBoot };
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
 * Deletes instances stopped (or declared dead) before `before` that own no
 * owed row: the sweep finds a dead owner's rows through its instance row.
 */
export function pruneInstances(db: Db, before: number): number {
  return db
    .prepare(
      `DELETE FROM ledger_instances WHERE stopped_at IS NOT NULL AND stopped_at < ? AND NOT EXISTS (
         SELECT 1 FROM ${OWED_ROWS} WHERE ${OWED} AND owner_instance = ledger_instances.id)`,
    )
    .run(before).changes;
}

/** Every instance row: a handful (one per start, pruned after the retention period). */
export function listInstances(db: Db): InstanceRecord[] {
  return (db.prepare('SELECT * FROM ledger_instances').all() as InstanceRowSql[]).map(toRecord);
}

/** Owners of owed rows that have no instance row (dead, and pruned by an older Homing). */
export function orphanOwners(db: Db): string[] {
  return (
    db
      .prepare(
        `SELECT DISTINCT owner_instance AS id FROM ${OWED_ROWS}
         WHERE ${OWED} AND owner_instance IS NOT NULL
           AND owner_instance NOT IN (SELECT id FROM ledger_instances)`,
      )
      .all() as { id: string }[]
  ).map((row) => row.id);
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
