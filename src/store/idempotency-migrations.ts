import type { Migration } from './kysely/schema-kit.ts';

/**
 * Schema step of the gateway's idempotency keys (gateway range 500–599): one row per (scope, key), claimed before a
 * keyed request runs and holding its first answer once it ran.
 */
export const IDEMPOTENCY_MIGRATIONS: readonly Migration[] = [
  {
    version: 510,
    name: 'gateway: idempotency keys of hooks and RPC requests',
    up: ({ db, int }) => [
      db.schema
        .createTable('idempotency_keys')
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('request_hash', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('response', 'text')
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('updated_at', int, (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pk', ['scope', 'key']),
      db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').column('created_at'),
    ],
  },
];
