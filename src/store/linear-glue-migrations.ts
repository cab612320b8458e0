import type { Migration } from './database.ts';

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
    sql: `
      CREATE TABLE linear_claims (
        key TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX linear_claims_created ON linear_claims(created_at);
      CREATE TABLE linear_assignments (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        issue_id TEXT NOT NULL,
        source TEXT NOT NULL,
        delivery_id TEXT NOT NULL UNIQUE,
        paired_with INTEGER,
        agent_session_id TEXT,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX linear_assignments_issue ON linear_assignments(issue_id, created_at);
      CREATE TABLE linear_jobs (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        key TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL,
        serial_key TEXT NOT NULL,
        agent_session_id TEXT,
        payload TEXT NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_at INTEGER NOT NULL,
        last_error TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX linear_jobs_status ON linear_jobs(status, next_at);
      CREATE INDEX linear_jobs_session ON linear_jobs(agent_session_id);
      CREATE INDEX linear_jobs_updated ON linear_jobs(updated_at);
      CREATE TABLE linear_planning (
        id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL,
        project_name TEXT NOT NULL,
        issue_id TEXT NOT NULL,
        issue_identifier TEXT NOT NULL,
        team_id TEXT NOT NULL,
        status TEXT NOT NULL,
        agent_session_id TEXT,
        turn_count INTEGER NOT NULL DEFAULT 0,
        issues_created INTEGER NOT NULL DEFAULT 0,
        history TEXT NOT NULL DEFAULT '[]',
        last_audit TEXT,
        created_by TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE UNIQUE INDEX linear_planning_active ON linear_planning(project_id) WHERE status IN ('interviewing', 'plan_review');
      CREATE INDEX linear_planning_issue ON linear_planning(issue_id);
    `,
  },
];
