import { agentMigrations } from '../agents/migrations';
import { ledgerMigrations } from '../ledger/migrations';
import { pipelineMigrations } from '../pipeline/migrations';
import { scheduleMigrations } from '../schedules/migrations';
import { sessionMigrations } from '../session/migrations';
import type { Migration } from './database';

/** Every migration of homing.db, in the order they apply. Append only. */
export const homingMigrations: readonly Migration[] = [...ledgerMigrations, ...sessionMigrations, ...pipelineMigrations, ...agentMigrations, ...scheduleMigrations];
