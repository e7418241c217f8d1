import type { Migration } from '../db/database';

/** The agents' schema, append-only: add the next number, never edit one that shipped. */
export const agentMigrations: readonly Migration[] = [
  {
    // Agent programs the gateway started and that have not exited yet. They run
    // in their own process group (detached), so a gateway killed with SIGKILL
    // leaves them running; the next gateway on this data directory reads these
    // rows and kills the ones that are provably still the same process
    // (reap-orphans.ts). A process is named by pid + start time + boot id, never
    // by a bare pid, so a reused pid is never killed. The owner is the gateway
    // process that started it, named the same way: a live owner's agents are
    // left alone.
    id: 'agents-001-processes',
    up(db) {
      db.exec(`CREATE TABLE agent_processes (
        id INTEGER PRIMARY KEY,
        pid INTEGER NOT NULL,
        process_start TEXT,
        boot_id TEXT,
        owner_pid INTEGER NOT NULL,
        owner_start TEXT,
        command TEXT NOT NULL,
        started_at INTEGER NOT NULL
      ) STRICT`);
    },
  },
];
