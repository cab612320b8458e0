import { sql } from 'kysely';
import type { Migration } from './kysely/schema-kit.ts';

/**
 * Scheduler steps (range 300–399): cron tasks and their runs, the heartbeat (tasks, cadence, queued events, runs) and
 * the wake outbox of coding-session events. Every run and event row is written before the engine is asked to accept
 * it, so a crash in between is found again on the next start.
 */
export const SCHEDULER_MIGRATIONS: readonly Migration[] = [
  {
    version: 300,
    name: 'cron tasks and runs, heartbeat tasks/state/events/runs, wake events',
    up: ({ db, int, serial }) => [
      db.schema
        .createTable('cron_tasks')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull().unique())
        .addColumn('schedule', 'text', (c) => c.notNull())
        .addColumn('timezone', 'text')
        .addColumn('prompt', 'text', (c) => c.notNull())
        .addColumn('enabled', int, (c) => c.notNull().defaultTo(1))
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('updated_at', int, (c) => c.notNull())
        .addColumn('last_run_at', int)
        .addColumn('last_due_at', int)
        .addColumn('next_run_at', int),
      db.schema
        .createTable('cron_runs')
        .addColumn('id', int, serial)
        .addColumn('task_id', 'text', (c) => c.notNull().references('cron_tasks.id').onDelete('cascade'))
        .addColumn('due_at', int, (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('missed', int, (c) => c.notNull().defaultTo(0))
        .addColumn('first_missed_at', int)
        .addColumn('prompt', 'text', (c) => c.notNull())
        .addColumn('message_id', 'text', (c) => c.notNull().unique())
        .addColumn('attempts', int, (c) => c.notNull().defaultTo(0))
        .addColumn('session_id', 'text')
        .addColumn('duplicate', int, (c) => c.notNull().defaultTo(0))
        .addColumn('error', 'text')
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('finished_at', int)
        .addUniqueConstraint('cron_runs_task_due', ['task_id', 'due_at']),
      db.schema.createIndex('cron_runs_status').on('cron_runs').column('status'),
      db.schema
        .createTable('heartbeat_tasks')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('title', 'text', (c) => c.notNull().unique())
        .addColumn('prompt', 'text', (c) => c.notNull())
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('updated_at', int, (c) => c.notNull()),
      db.schema
        .createTable('heartbeat_state')
        .addColumn('id', int, (c) => c.primaryKey().check(sql`id = 1`))
        .addColumn('anchor_at', int, (c) => c.notNull())
        .addColumn('last_run_at', int)
        .addColumn('last_reason', 'text'),
      db.schema
        .createTable('heartbeat_runs')
        .addColumn('id', int, serial)
        .addColumn('message_id', 'text', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('prompt', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', int, (c) => c.notNull().defaultTo(0))
        .addColumn('tasks', int, (c) => c.notNull().defaultTo(0))
        .addColumn('events', int, (c) => c.notNull().defaultTo(0))
        .addColumn('session_id', 'text')
        .addColumn('duplicate', int, (c) => c.notNull().defaultTo(0))
        .addColumn('error', 'text')
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('finished_at', int),
      db.schema.createIndex('heartbeat_runs_status').on('heartbeat_runs').column('status'),
      db.schema
        .createTable('heartbeat_events')
        .addColumn('id', int, serial)
        .addColumn('text', 'text', (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('run_id', int, (c) => c.references('heartbeat_runs.id').onDelete('cascade')),
      db.schema.createIndex('heartbeat_events_run').on('heartbeat_events').column('run_id'),
      db.schema
        .createTable('wake_events')
        .addColumn('id', int, serial)
        .addColumn('message_id', 'text', (c) => c.notNull().unique())
        .addColumn('coding_session_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('origin_session_id', 'text')
        .addColumn('text', 'text', (c) => c.notNull())
        .addColumn('target_session_id', 'text')
        .addColumn('via', 'text')
        .addColumn('attempts', int, (c) => c.notNull().defaultTo(0))
        .addColumn('error', 'text')
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('settled_at', int),
      db.schema.createIndex('wake_events_status').on('wake_events').column('status'),
    ],
  },
];
