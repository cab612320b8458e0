import type { Migration } from './kysely/schema-kit.ts';

/**
 * Schema step of the coding sessions' restart notices (coding range 1–99): a session a crash cut off is marked
 * interrupted together with a notice row, cleared once its chat notice and orchestrator wake are stored.
 */
export const RESTART_NOTICE_MIGRATIONS: readonly Migration[] = [
  {
    version: 41,
    name: 'coding sessions: restart notices owed (interrupted, not yet announced)',
    up: ({ db, int }) => [
      db.schema
        .createTable('restart_notices')
        .addColumn('session_id', 'text', (c) => c.primaryKey())
        .addColumn('interrupted_at', int, (c) => c.notNull()),
    ],
  },
];
