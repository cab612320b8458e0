import type { Migration } from './database.ts';

/**
 * Schema of the Linear dispatch pipeline (versions 420–459 of the Linear range): one row per dispatch with its
 * compare-and-swap status, the map from coding sessions to dispatch phases, and the FIFO queue (queued rows by seq).
 */
export const LINEAR_PIPELINE_MIGRATIONS: readonly Migration[] = [
  {
    version: 420,
    name: 'linear dispatches, dispatch sessions, dispatch queue',
    sql: `
      CREATE TABLE linear_dispatches (
        id TEXT PRIMARY KEY,
        issue_id TEXT NOT NULL,
        identifier TEXT NOT NULL,
        title TEXT NOT NULL,
        agent_session_id TEXT,
        status TEXT NOT NULL,
        attempt INTEGER NOT NULL DEFAULT 1,
        round_start INTEGER NOT NULL DEFAULT 1,
        tier TEXT NOT NULL,
        tier_reason TEXT NOT NULL,
        harness TEXT NOT NULL,
        model TEXT,
        audit_harness TEXT NOT NULL,
        audit_model TEXT,
        profile TEXT,
        repo_path TEXT NOT NULL,
        branch TEXT NOT NULL,
        worktree_path TEXT,
        context TEXT NOT NULL DEFAULT '{}',
        stop_requested INTEGER NOT NULL DEFAULT 0,
        queue_seq INTEGER,
        last_error TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        last_activity_at INTEGER NOT NULL,
        completed_at INTEGER
      );
      CREATE UNIQUE INDEX linear_dispatches_one_active_per_issue ON linear_dispatches(issue_id)
        WHERE status IN ('queued', 'dispatched', 'working', 'auditing');
      CREATE INDEX linear_dispatches_status ON linear_dispatches(status);
      CREATE INDEX linear_dispatches_agent_session ON linear_dispatches(agent_session_id);
      CREATE INDEX linear_dispatches_queue ON linear_dispatches(queue_seq) WHERE status = 'queued';
      CREATE TABLE linear_dispatch_sessions (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL UNIQUE,
        dispatch_id TEXT NOT NULL REFERENCES linear_dispatches(id) ON DELETE CASCADE,
        phase TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        try INTEGER NOT NULL,
        end_cause TEXT,
        started_at INTEGER NOT NULL,
        ended_at INTEGER
      );
      CREATE INDEX linear_dispatch_sessions_dispatch ON linear_dispatch_sessions(dispatch_id, seq);
    `,
  },
];
