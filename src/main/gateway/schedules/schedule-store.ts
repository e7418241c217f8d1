import type { ScheduleAction, ScheduleRunSummary } from '../../../shared/api';
import { cachedStatement, durably, type Db } from '../db/database';
import { nextDue, type When } from './when';

/** A schedule as stored. */
export interface Schedule {
  readonly id: number;
  readonly name: string;
  readonly when: When;
  readonly action: ScheduleAction;
  readonly body: string;
  readonly sessionKey: string;
  readonly platform: string;
  readonly graceMs: number;
  readonly paused: boolean;
  readonly createdVia: 'window' | 'cli' | 'chat';
  readonly createdAt: number;
  readonly lastDueAt: number | null;
  readonly nextDueAt: number | null;
}

export type NewSchedule = Pick<Schedule, 'name' | 'when' | 'action' | 'body' | 'sessionKey' | 'platform' | 'graceMs' | 'createdVia'>;

export type ScheduleChange = Partial<Pick<Schedule, 'name' | 'when' | 'action' | 'body' | 'graceMs' | 'paused'>>;

/** A run as stored: its schedule, its due time (the run's id together) and what became of it. */
export interface ScheduleRun extends ScheduleRunSummary {
  readonly scheduleId: number;
  /** The run's message in its conversation: `schedule:<id>:<due time>`. */
  readonly messageRef: string;
}

interface ScheduleDbRow {
  id: number;
  name: string;
  kind: 'cron' | 'once';
  cron: string | null;
  once_at: number | null;
  zone: string;
  action: ScheduleAction;
  body: string;
  session_key: string;
  platform: string;
  grace_ms: number;
  paused: number;
  created_via: Schedule['createdVia'];
  created_at: number;
  last_due_at: number | null;
  next_due_at: number | null;
}

interface RunDbRow {
  schedule_id: number;
  due_at: number;
  reason: ScheduleRun['reason'];
  state: ScheduleRun['state'];
  message_ref: string;
  missed: number;
  obligation_id: string | null;
  detail: string | null;
  finished_at: number | null;
}

/** The message ref of a schedule's run: its id in the conversation and part of its reply's delivery id. */
export function runMessageRef(scheduleId: number, dueAt: number): string {
  return `schedule:${scheduleId}:${dueAt}`;
}

/**
 * Schedules and their runs in homing.db. Every write that decides whether a
 * run happens is committed at synchronous=FULL before anything acts on it
 * (`durably`): a run's row exists on the disk before its prompt is saved or
 * the agent is asked, so after a crash the next start finds it.
 */
export class ScheduleStore {
  constructor(private readonly db: Db) {}

  list(): Schedule[] {
    return (cachedStatement(this.db, 'SELECT * FROM schedules ORDER BY next_due_at IS NULL, next_due_at, id').all() as ScheduleDbRow[]).map(toSchedule);
  }

  get(id: number): Schedule | undefined {
    const row = cachedStatement(this.db, 'SELECT * FROM schedules WHERE id = ?').get(id) as ScheduleDbRow | undefined;
    return row ? toSchedule(row) : undefined;
  }

  add(schedule: NewSchedule, now: number): Schedule {
    const next = nextDue(schedule.when, now) ?? null;
    const id = durably(this.db, () => {
      const result = cachedStatement(
        this.db,
        `INSERT INTO schedules (name, kind, cron, once_at, zone, action, body, session_key, platform, grace_ms, paused, created_via, created_at, updated_at, next_due_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)`,
      ).run(
        schedule.name,
        schedule.when.kind,
        schedule.when.kind === 'cron' ? schedule.when.cron : null,
        schedule.when.kind === 'once' ? schedule.when.at : null,
        schedule.when.zone,
        schedule.action,
        schedule.body,
        schedule.sessionKey,
        schedule.platform,
        schedule.graceMs,
        schedule.createdVia,
        now,
        now,
        next,
      );
      return Number(result.lastInsertRowid);
    });
    return this.get(id)!;
  }

  /**
   * Changes a schedule. A new `when` counts its next due time from now (or
   * from the last one handled, whichever is later), so an edit never brings
   * a handled time round again.
   */
  update(id: number, change: ScheduleChange, now: number): Schedule | undefined {
    return durably(this.db, () => {
      const current = this.get(id);
      if (!current) return undefined;
      const when = change.when ?? current.when;
      const from = Math.max(now, current.lastDueAt ?? -Infinity);
      // Times a paused schedule passed are not owed: resumed, it goes on from now.
      const resumed = change.paused === false && current.paused && current.nextDueAt !== null && current.nextDueAt <= now;
      const next = change.when || resumed ? (nextDue(when, from) ?? null) : current.nextDueAt;
      cachedStatement(
        this.db,
        `UPDATE schedules SET name = ?, kind = ?, cron = ?, once_at = ?, zone = ?, action = ?, body = ?, grace_ms = ?, paused = ?, updated_at = ?, next_due_at = ?
         WHERE id = ?`,
      ).run(
        change.name ?? current.name,
        when.kind,
        when.kind === 'cron' ? when.cron : null,
        when.kind === 'once' ? when.at : null,
        when.zone,
        change.action ?? current.action,
        change.body ?? current.body,
        change.graceMs ?? current.graceMs,
        (change.paused ?? current.paused) ? 1 : 0,
        now,
        next,
        id,
      );
      return this.get(id);
    });
  }

  /** Removes a schedule and its runs; a run already recorded still gets its answer (its message is saved). */
  remove(id: number): boolean {
    return durably(this.db, () => {
      cachedStatement(this.db, 'DELETE FROM schedule_runs WHERE schedule_id = ?').run(id);
      return cachedStatement(this.db, 'DELETE FROM schedules WHERE id = ?').run(id).changes > 0;
    });
  }

  /** The soonest due time of an active schedule, or undefined. */
  soonestDue(): number | undefined {
    const row = cachedStatement(this.db, 'SELECT min(next_due_at) AS at FROM schedules WHERE paused = 0 AND next_due_at IS NOT NULL').get() as { at: number | null };
    return row.at ?? undefined;
  }

  /** Active schedules due at or before `now`. */
  due(now: number): Schedule[] {
    return (
      cachedStatement(this.db, 'SELECT * FROM schedules WHERE paused = 0 AND next_due_at IS NOT NULL AND next_due_at <= ? ORDER BY next_due_at, id').all(now) as ScheduleDbRow[]
    ).map(toSchedule);
  }

  /**
   * Records a run of `schedule` for `dueAt` and moves the schedule past it, in
   * one fsynced commit: `handledThrough` is the latest due time this decision
   * covers (skipped ones included), the next due time is counted after it.
   * Returns the run, or undefined when a run for that due time exists already
   * (it happened, or is happening: never twice).
   */
  startRun(
    schedule: Schedule,
    run: { readonly dueAt: number; readonly reason: ScheduleRun['reason']; readonly state: 'running' | 'skipping'; readonly missed: number; readonly detail?: string },
    handledThrough: number,
    now: number,
  ): ScheduleRun | undefined {
    return durably(this.db, () => {
      const messageRef = runMessageRef(schedule.id, run.dueAt);
      const inserted = cachedStatement(
        this.db,
        `INSERT INTO schedule_runs (schedule_id, due_at, reason, state, message_ref, missed, detail, started_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      ).run(schedule.id, run.dueAt, run.reason, run.state, messageRef, run.missed, run.detail ?? null, now);
      if (run.reason !== 'now') this.moveAfter(schedule, handledThrough, now);
      if (inserted.changes === 0) return undefined;
      return this.run(schedule.id, run.dueAt);
    });
  }

  /** Moves a schedule past `handledThrough` without a run (a paused schedule's missed times are not owed). */
  moveAfter(schedule: Schedule, handledThrough: number, now: number): void {
    const last = Math.max(handledThrough, schedule.lastDueAt ?? -Infinity);
    const next = nextDue(schedule.when, last) ?? null;
    cachedStatement(this.db, 'UPDATE schedules SET last_due_at = ?, next_due_at = ?, updated_at = ? WHERE id = ?').run(last, next, now, schedule.id);
  }

  finishRun(scheduleId: number, dueAt: number, outcome: { readonly state: 'answered' | 'failed' | 'skipped'; readonly obligationId?: string | undefined; readonly detail?: string | undefined }, now: number): void {
    cachedStatement(
      this.db,
      `UPDATE schedule_runs SET state = ?, obligation_id = coalesce(?, obligation_id), detail = coalesce(?, detail), finished_at = ?
       WHERE schedule_id = ? AND due_at = ?`,
    ).run(outcome.state, outcome.obligationId ?? null, outcome.detail ?? null, now, scheduleId, dueAt);
  }

  run(scheduleId: number, dueAt: number): ScheduleRun | undefined {
    const row = cachedStatement(this.db, 'SELECT * FROM schedule_runs WHERE schedule_id = ? AND due_at = ?').get(scheduleId, dueAt) as RunDbRow | undefined;
    return row ? toRun(row) : undefined;
  }

  /** Runs left running or skipping by a process that stopped or died, oldest first. */
  openRuns(): ScheduleRun[] {
    return (cachedStatement(this.db, `SELECT * FROM schedule_runs WHERE state IN ('running', 'skipping') ORDER BY started_at, schedule_id`).all() as RunDbRow[]).map(toRun);
  }

  /** Each schedule's latest run (by when it started). */
  lastRuns(): Map<number, ScheduleRun> {
    const rows = cachedStatement(
      this.db,
      `SELECT r.* FROM schedule_runs AS r
       WHERE r.rowid = (SELECT r2.rowid FROM schedule_runs AS r2 WHERE r2.schedule_id = r.schedule_id ORDER BY r2.started_at DESC, r2.due_at DESC LIMIT 1)`,
    ).all() as RunDbRow[];
    return new Map(rows.map((row) => [row.schedule_id, toRun(row)]));
  }

  /** Keeps the latest `keep` runs of each schedule (the rest are history no view shows). */
  prune(keep = 50): number {
    return cachedStatement(
      this.db,
      `DELETE FROM schedule_runs WHERE state NOT IN ('running', 'skipping') AND rowid IN (
         SELECT rowid FROM (SELECT rowid, row_number() OVER (PARTITION BY schedule_id ORDER BY started_at DESC) AS n FROM schedule_runs) WHERE n > ?)`,
    ).run(keep).changes;
  }
}

function toSchedule(row: ScheduleDbRow): Schedule {
  const when: When = row.kind === 'cron' ? { kind: 'cron', cron: row.cron!, zone: row.zone } : { kind: 'once', at: row.once_at!, zone: row.zone };
  return {
    id: row.id,
    name: row.name,
    when,
    action: row.action,
    body: row.body,
    sessionKey: row.session_key,
    platform: row.platform,
    graceMs: row.grace_ms,
    paused: row.paused === 1,
    createdVia: row.created_via,
    createdAt: row.created_at,
    lastDueAt: row.last_due_at,
    nextDueAt: row.next_due_at,
  };
}

function toRun(row: RunDbRow): ScheduleRun {
  return {
    scheduleId: row.schedule_id,
    dueAt: row.due_at,
    reason: row.reason,
    state: row.state,
    messageRef: row.message_ref,
    missed: row.missed,
    obligationId: row.obligation_id,
    detail: row.detail,
    finishedAt: row.finished_at,
  };
}
