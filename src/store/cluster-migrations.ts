import type { Migration } from './kysely/schema-kit.ts';

/** Schema steps of the cluster (range 800–899): nodes and their heartbeats, singleton leases, shared secrets. */
export const CLUSTER_MIGRATIONS: readonly Migration[] = [
  {
    version: 800,
    name: 'cluster: nodes, leases, shared secrets',
    up: ({ db, int }) => [
      db.schema
        .createTable('cluster_nodes')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('incarnation', 'text', (c) => c.notNull())
        .addColumn('labels', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('harnesses', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('workspaces', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('max_sessions', int, (c) => c.notNull())
        .addColumn('url', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('started_at', int, (c) => c.notNull())
        .addColumn('heartbeat_at', int, (c) => c.notNull())
        .addColumn('down_at', int)
        .addColumn('taken_over_at', int),
      db.schema
        .createTable('cluster_leases')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('holder', 'text', (c) => c.notNull())
        .addColumn('incarnation', 'text', (c) => c.notNull())
        .addColumn('expires_at', int, (c) => c.notNull())
        .addColumn('acquired_at', int, (c) => c.notNull()),
      db.schema
        .createTable('cluster_secrets')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('created_at', int, (c) => c.notNull()),
    ],
  },
  {
    version: 820,
    name: 'cluster: commands for a session on another node',
    up: ({ db, int }) => [
      db.schema
        .createTable('cluster_commands')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('target', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('result', 'text')
        .addColumn('error', 'text')
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('claimed_at', int)
        .addColumn('claimed_by', 'text')
        .addColumn('finished_at', int),
      db.schema
        .createIndex('cluster_commands_target')
        .on('cluster_commands')
        .columns(['target', 'status', 'created_at']),
    ],
  },
];
