import type { Migration } from './kysely/schema-kit.ts';

/**
 * Schema of the Linear dispatch pipeline (versions 420–459 of the Linear range): one row per dispatch with its
 * compare-and-swap status, the map from coding sessions to dispatch phases, and the FIFO queue (queued rows by seq).
 */
export const LINEAR_PIPELINE_MIGRATIONS: readonly Migration[] = [
  {
    version: 420,
    name: 'linear dispatches, dispatch sessions, dispatch queue',
    up: ({ db, int, serial, partial }) => [
      db.schema
        .createTable('linear_dispatches')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('issue_id', 'text', (c) => c.notNull())
        .addColumn('identifier', 'text', (c) => c.notNull())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('agent_session_id', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempt', int, (c) => c.notNull().defaultTo(1))
        .addColumn('round_start', int, (c) => c.notNull().defaultTo(1))
        .addColumn('tier', 'text', (c) => c.notNull())
        .addColumn('tier_reason', 'text', (c) => c.notNull())
        .addColumn('harness', 'text', (c) => c.notNull())
        .addColumn('model', 'text')
        .addColumn('audit_harness', 'text', (c) => c.notNull())
        .addColumn('audit_model', 'text')
        .addColumn('profile', 'text')
        .addColumn('repo_path', 'text', (c) => c.notNull())
        .addColumn('branch', 'text', (c) => c.notNull())
        .addColumn('worktree_path', 'text')
        .addColumn('context', 'text', (c) => c.notNull().defaultTo('{}'))
        .addColumn('stop_requested', int, (c) => c.notNull().defaultTo(0))
        .addColumn('queue_seq', int)
        .addColumn('last_error', 'text')
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('updated_at', int, (c) => c.notNull())
        .addColumn('last_activity_at', int, (c) => c.notNull())
        .addColumn('completed_at', int),
      partial(
        db.schema
          .createIndex('linear_dispatches_one_active_per_issue')
          .unique()
          .on('linear_dispatches')
          .column('issue_id'),
        "status IN ('queued', 'dispatched', 'working', 'auditing')",
      ),
      db.schema.createIndex('linear_dispatches_status').on('linear_dispatches').column('status'),
      db.schema.createIndex('linear_dispatches_agent_session').on('linear_dispatches').column('agent_session_id'),
      partial(
        db.schema.createIndex('linear_dispatches_queue').on('linear_dispatches').column('queue_seq'),
        "status = 'queued'",
      ),
      db.schema
        .createTable('linear_dispatch_sessions')
        .addColumn('seq', int, serial)
        .addColumn('session_id', 'text', (c) => c.notNull().unique())
        .addColumn('dispatch_id', 'text', (c) => c.notNull().references('linear_dispatches.id').onDelete('cascade'))
        .addColumn('phase', 'text', (c) => c.notNull())
        .addColumn('attempt', int, (c) => c.notNull())
        .addColumn('try', int, (c) => c.notNull())
        .addColumn('end_cause', 'text')
        .addColumn('started_at', int, (c) => c.notNull())
        .addColumn('ended_at', int),
      db.schema
        .createIndex('linear_dispatch_sessions_dispatch')
        .on('linear_dispatch_sessions')
        .columns(['dispatch_id', 'seq']),
    ],
  },
  {
    version: 421,
    name: 'linear pipeline: the node that owns a dispatch (cluster placement)',
    up: ({ db }) => [
      db.schema.alterTable('linear_dispatches').addColumn('node', 'text'),
      db.schema.createIndex('linear_dispatches_node').on('linear_dispatches').columns(['node', 'status']),
    ],
  },
];
