import type { Migration } from './kysely/schema-kit.ts';

/**
 * Coding-session steps for the cluster (coding range 90–99): the node a session runs on, and for a queued launch where
 * it may be placed (`place_on`: one node by name; `place_labels`: JSON array of labels the node must have) and its
 * place in the queue (`queue_seq`, increasing in the order launches were queued).
 */
export const CODING_CLUSTER_MIGRATIONS: readonly Migration[] = [
  {
    version: 90,
    name: 'coding sessions: node, placement',
    up: ({ db, int }) => [
      db.schema.alterTable('coding_sessions').addColumn('node', 'text'),
      db.schema.alterTable('coding_sessions').addColumn('place_on', 'text'),
      db.schema.alterTable('coding_sessions').addColumn('place_labels', 'text'),
      db.schema.alterTable('coding_sessions').addColumn('queue_seq', int),
      db.schema.createIndex('coding_sessions_node_status').on('coding_sessions').columns(['node', 'status']),
    ],
  },
];
