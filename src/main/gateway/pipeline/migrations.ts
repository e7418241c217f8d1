import type { Migration } from '../db/database';

export const pipelineMigrations: readonly Migration[] = [
  {
    // Interrupted turns already answered again once: a turn that crashes the
    // gateway every time must not be re-run on every restart.
    id: 'pipeline-001-interrupted-retries',
    up: (db) =>
      db.exec(`CREATE TABLE pipeline_interrupted_retries (
        session_id TEXT NOT NULL,
        message_ref TEXT NOT NULL,
        retried_at INTEGER NOT NULL,
        PRIMARY KEY (session_id, message_ref)
      ) STRICT`),
  },
];
