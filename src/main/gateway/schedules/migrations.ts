import type { Migration } from '../db/database';

export const scheduleMigrations: readonly Migration[] = [
  {
    // Schedules (schedules/schedule-store.ts) and their runs. A run is keyed by
    // (schedule, due time) and recorded durably before the agent is asked, so a
    // crash never runs a due time twice and never drops it (scheduler.ts).
    // last_due_at: the latest due time handled (run or skipped); due times are
    // computed after it, never from the clock alone, so a clock set back never
    // brings a handled time round again. next_due_at: NULL once nothing is
    // left (a one-time schedule that ran).
    id: 'schedules-001-schedules-and-runs',
    up(db) {
      db.exec(`CREATE TABLE schedules (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('cron', 'once')),
        cron TEXT,
        once_at INTEGER,
        zone TEXT NOT NULL,
        action TEXT NOT NULL CHECK (action IN ('prompt', 'text')),
        body TEXT NOT NULL,
        session_key TEXT NOT NULL,
        platform TEXT NOT NULL,
        grace_ms INTEGER NOT NULL CHECK (grace_ms >= 0),
        paused INTEGER NOT NULL DEFAULT 0,
        created_via TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        last_due_at INTEGER,
        next_due_at INTEGER,
        CHECK ((kind = 'cron' AND cron IS NOT NULL) OR (kind = 'once' AND once_at IS NOT NULL))
      ) STRICT`);
      db.exec('CREATE INDEX schedules_next ON schedules (next_due_at) WHERE paused = 0 AND next_due_at IS NOT NULL');
      // state: running (recorded, its turn not finished), answered, failed,
      // skipping (missed; its line not yet recorded), skipped.
      // reason: due (on time), late (missed, run within the grace window), now (run now).
      db.exec(`CREATE TABLE schedule_runs (
        schedule_id INTEGER NOT NULL,
        due_at INTEGER NOT NULL,
        reason TEXT NOT NULL CHECK (reason IN ('due', 'late', 'now', 'missed')),
        state TEXT NOT NULL CHECK (state IN ('running', 'answered', 'failed', 'skipping', 'skipped')),
        message_ref TEXT NOT NULL,
        missed INTEGER NOT NULL DEFAULT 0,
        obligation_id TEXT,
        detail TEXT,
        started_at INTEGER NOT NULL,
        finished_at INTEGER,
        PRIMARY KEY (schedule_id, due_at)
      ) STRICT`);
      db.exec(`CREATE INDEX schedule_runs_open ON schedule_runs (schedule_id) WHERE state IN ('running', 'skipping')`);
    },
  },
];
