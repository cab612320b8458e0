import type { Migration } from './database.ts';

/**
 * Schema step of the gateway's idempotency keys (gateway range 500–599): one row per (scope, key), claimed before a
 * keyed request runs and holding its first answer once it ran.
 */
export const IDEMPOTENCY_MIGRATIONS: readonly Migration[] = [
  {
    version: 510,
    name: 'gateway: idempotency keys of hooks and RPC requests',
    sql: `
      CREATE TABLE idempotency_keys (
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        state TEXT NOT NULL,
        owner TEXT NOT NULL,
        response TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (scope, key)
      );
      CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at);
    `,
  },
];
