import type { Migration } from '../db/database';

export const sessionMigrations: readonly Migration[] = [];
