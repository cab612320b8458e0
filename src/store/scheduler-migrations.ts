import type { Migration } from './database.ts';

/**
 * Scheduler steps (range 300–399): cron tasks and their runs, the heartbeat (tasks, cadence, queued events, runs) and
 * the wake outbox of coding-session events. Every run and event row is written before the engine is asked to accept
 * it, so a crash in between is found again on the next start.
 */
export const SCHEDULER_MIGRATIONS: readonly Migration[] = [
  {
    version: 300,
    name: 'cron tasks and runs, heartbeat tasks/state/events/runs, wake events',
    sql: `
      CREATE TABLE cron_tasks (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        schedule TEXT NOT NULL,
        timezone TEXT,
        prompt TEXT NOT NULL,
        enabled INTEGER NOT NULL DEFAULT 1,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        last_run_at INTEGER,
        last_due_at INTEGER,
        next_run_at INTEGER
      );
      CREATE TABLE cron_runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        task_id TEXT NOT NULL REFERENCES cron_tasks(id) ON DELETE CASCADE,
        due_at INTEGER NOT NULL,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        missed INTEGER NOT NULL DEFAULT 0,
        first_missed_at INTEGER,
        prompt TEXT NOT NULL,
        message_id TEXT NOT NULL UNIQUE,
        attempts INTEGER NOT NULL DEFAULT 0,
        session_id TEXT,
        duplicate INTEGER NOT NULL DEFAULT 0,
        error TEXT,
        created_at INTEGER NOT NULL,
        finished_at INTEGER,
        UNIQUE (task_id, due_at)
      );
      CREATE INDEX cron_runs_status ON cron_runs(status);
      CREATE TABLE heartbeat_tasks (
        id TEXT PRIMARY KEY,
        title TEXT NOT NULL UNIQUE,
        prompt TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE TABLE heartbeat_state (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        anchor_at INTEGER NOT NULL,
        last_run_at INTEGER,
        last_reason TEXT
      );
      CREATE TABLE heartbeat_runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        message_id TEXT NOT NULL,
        reason TEXT NOT NULL,
        prompt TEXT NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        tasks INTEGER NOT NULL DEFAULT 0,
        events INTEGER NOT NULL DEFAULT 0,
        session_id TEXT,
        duplicate INTEGER NOT NULL DEFAULT 0,
        error TEXT,
        created_at INTEGER NOT NULL,
        finished_at INTEGER
      );
      CREATE INDEX heartbeat_runs_status ON heartbeat_runs(status);
      CREATE TABLE heartbeat_events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        text TEXT NOT NULL,
        source TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        run_id INTEGER REFERENCES heartbeat_runs(id) ON DELETE CASCADE
      );
      CREATE INDEX heartbeat_events_run ON heartbeat_events(run_id);
      CREATE TABLE wake_events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        message_id TEXT NOT NULL UNIQUE,
        coding_session_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        origin_session_id TEXT,
        text TEXT NOT NULL,
        target_session_id TEXT,
        via TEXT,
        attempts INTEGER NOT NULL DEFAULT 0,
        error TEXT,
        created_at INTEGER NOT NULL,
        settled_at INTEGER
      );
      CREATE INDEX wake_events_status ON wake_events(status);
    `,
  },
];
