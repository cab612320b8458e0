import type { Migration } from './kysely/schema-kit.ts';

/**
 * Schema of the Linear event router, its work queue and the project planner (versions 460–499 of the Linear range):
 * claims (which path took a comment or prompt: one answer per comment whatever webhook reports it), assignments (an
 * Issue-webhook assignment and its AppUserNotification paired into one dispatch), the durable job queue (mention
 * answers, triage, planner turns) and planning sessions with their interview state.
 */
export const LINEAR_GLUE_MIGRATIONS: readonly Migration[] = [
  {
    version: 460,
    name: 'linear router claims, assignments, jobs, planning sessions',
    up: ({ db, int, serial, partial }) => [
      db.schema
        .createTable('linear_claims')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('created_at', int, (c) => c.notNull()),
      db.schema.createIndex('linear_claims_created').on('linear_claims').column('created_at'),
      db.schema
        .createTable('linear_assignments')
        .addColumn('seq', int, serial)
        .addColumn('issue_id', 'text', (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('delivery_id', 'text', (c) => c.notNull().unique())
        .addColumn('paired_with', int)
        .addColumn('agent_session_id', 'text')
        .addColumn('created_at', int, (c) => c.notNull()),
      db.schema.createIndex('linear_assignments_issue').on('linear_assignments').columns(['issue_id', 'created_at']),
      db.schema
        .createTable('linear_jobs')
        .addColumn('seq', int, serial)
        .addColumn('key', 'text', (c) => c.notNull().unique())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('serial_key', 'text', (c) => c.notNull())
        .addColumn('agent_session_id', 'text')
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', int, (c) => c.notNull().defaultTo(0))
        .addColumn('next_at', int, (c) => c.notNull())
        .addColumn('last_error', 'text')
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('updated_at', int, (c) => c.notNull()),
      db.schema.createIndex('linear_jobs_status').on('linear_jobs').columns(['status', 'next_at']),
      db.schema.createIndex('linear_jobs_session').on('linear_jobs').column('agent_session_id'),
      db.schema.createIndex('linear_jobs_updated').on('linear_jobs').column('updated_at'),
      db.schema
        .createTable('linear_planning')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('project_name', 'text', (c) => c.notNull())
        .addColumn('issue_id', 'text', (c) => c.notNull())
        .addColumn('issue_identifier', 'text', (c) => c.notNull())
        .addColumn('team_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('agent_session_id', 'text')
        .addColumn('turn_count', int, (c) => c.notNull().defaultTo(0))
        .addColumn('issues_created', int, (c) => c.notNull().defaultTo(0))
        .addColumn('history', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('last_audit', 'text')
        .addColumn('created_by', 'text')
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('updated_at', int, (c) => c.notNull()),
      partial(
        db.schema.createIndex('linear_planning_active').unique().on('linear_planning').column('project_id'),
        "status IN ('interviewing', 'plan_review')",
      ),
      db.schema.createIndex('linear_planning_issue').on('linear_planning').column('issue_id'),
    ],
  },
];
