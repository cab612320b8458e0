import { APPROVAL_MIGRATIONS } from './approval-migrations.ts';
import { CHANNEL_MIGRATIONS } from './channel-migrations.ts';
import { CLUSTER_MIGRATIONS } from './cluster-migrations.ts';
import { CODING_CLUSTER_MIGRATIONS } from './coding-cluster-migrations.ts';
import { ENGINE_MIGRATIONS } from './engine-migrations.ts';
import { GITHUB_MIGRATIONS } from './github-migrations.ts';
import { IDEMPOTENCY_MIGRATIONS } from './idempotency-migrations.ts';
import type { Migration } from './kysely/schema-kit.ts';
import { LINEAR_GLUE_MIGRATIONS } from './linear-glue-migrations.ts';
import { LINEAR_MIGRATIONS } from './linear-migrations.ts';
import { LINEAR_PIPELINE_MIGRATIONS } from './linear-pipeline-migrations.ts';
import { RESTART_NOTICE_MIGRATIONS } from './restart-notice-migrations.ts';
import { SCHEDULER_MIGRATIONS } from './scheduler-migrations.ts';
import { WEB_MIGRATIONS } from './web-migrations.ts';

/**
 * The schema, one numbered step at a time. Never edit a released step: add a new one. Each domain numbers its steps in
 * its own range so work on one never renumbers another's: coding sessions 1–99, engine 100–199, channels 200–299,
 * scheduler 300–399, Linear 400–499, gateway 500–599, approvals 600–699, GitHub 700–799, cluster 800–899. `migrate` tracks every version it applied, so a gap is never a problem.
 */
export const CODING_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'coding sessions, lookup keys, runs',
    up: ({ db, int, real, serial }) => [
      db.schema
        .createTable('coding_sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull().unique())
        .addColumn('harness', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('prompt', 'text', (c) => c.notNull())
        .addColumn('workdir', 'text', (c) => c.notNull())
        .addColumn('model', 'text')
        .addColumn('backend_session_id', 'text')
        .addColumn('origin_channel', 'text', (c) => c.notNull())
        .addColumn('origin_session_id', 'text')
        .addColumn('spec', 'text', (c) => c.notNull())
        .addColumn('cost_usd', real, (c) => c.notNull().defaultTo(0))
        .addColumn('started_at', int, (c) => c.notNull())
        .addColumn('completed_at', int)
        .addColumn('updated_at', int, (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('end_reason', 'text')
        .addColumn('budget_exhausted', int, (c) => c.notNull().defaultTo(0))
        .addColumn('foreground', 'text', (c) => c.notNull().defaultTo('{}'))
        .addColumn('auto_responds', int, (c) => c.notNull().defaultTo(0))
        .addColumn('resumed_from', 'text')
        .addColumn('forked', int, (c) => c.notNull().defaultTo(0))
        .addColumn('pid', int),
      db.schema.createIndex('coding_sessions_status').on('coding_sessions').column('status'),
      db.schema.createIndex('coding_sessions_completed').on('coding_sessions').column('completed_at'),
      db.schema
        .createTable('session_keys')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('session_id', 'text', (c) => c.notNull().references('coding_sessions.id').onDelete('cascade'))
        .addColumn('kind', 'text', (c) => c.notNull()),
      db.schema.createIndex('session_keys_session').on('session_keys').column('session_id'),
      db.schema
        .createTable('session_runs')
        .addColumn('id', int, serial)
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('prompt', 'text', (c) => c.notNull())
        .addColumn('harness', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('cost_usd', real, (c) => c.notNull().defaultTo(0))
        .addColumn('started_at', int, (c) => c.notNull())
        .addColumn('ended_at', int)
        .addColumn('duration_ms', int),
      db.schema.createIndex('session_runs_session').on('session_runs').column('session_id'),
      db.schema.createIndex('session_runs_ended').on('session_runs').column('ended_at'),
    ],
  },
  {
    // Session lists are paged newest first: these let a page read only its own rows, with or without a status filter.
    version: 20,
    name: 'coding session paging indexes',
    up: ({ db }) => [
      db.schema.createIndex('coding_sessions_started').on('coding_sessions').column('started_at'),
      db.schema.createIndex('coding_sessions_status_started').on('coding_sessions').columns(['status', 'started_at']),
    ],
  },
  {
    // Pages break start-time ties on the id (portable; SQLite's rowid is not): the paging indexes carry it, and
    // replace version 20's, which they cover.
    version: 21,
    name: 'coding session paging indexes with the id tie-break',
    up: ({ db }) => [
      db.schema.dropIndex('coding_sessions_started'),
      db.schema.dropIndex('coding_sessions_status_started'),
      db.schema.createIndex('coding_sessions_started_id').on('coding_sessions').columns(['started_at', 'id']),
      db.schema
        .createIndex('coding_sessions_status_started_id')
        .on('coding_sessions')
        .columns(['status', 'started_at', 'id']),
    ],
  },
];

/** Every domain's steps. */
export const MIGRATIONS: readonly Migration[] = [
  ...CODING_MIGRATIONS,
  ...CODING_CLUSTER_MIGRATIONS,
  ...RESTART_NOTICE_MIGRATIONS,
  ...ENGINE_MIGRATIONS,
  ...CHANNEL_MIGRATIONS,
  ...WEB_MIGRATIONS,
  ...LINEAR_MIGRATIONS,
  ...LINEAR_PIPELINE_MIGRATIONS,
  ...LINEAR_GLUE_MIGRATIONS,
  ...SCHEDULER_MIGRATIONS,
  ...IDEMPOTENCY_MIGRATIONS,
  ...APPROVAL_MIGRATIONS,
  ...GITHUB_MIGRATIONS,
  ...CLUSTER_MIGRATIONS,
];
