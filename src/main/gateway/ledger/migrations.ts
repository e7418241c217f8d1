import type { Migration } from '../db/database';

export const ledgerMigrations: readonly Migration[] = [];
