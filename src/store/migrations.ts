import { CHANNEL_MIGRATIONS } from './channel-migrations.ts';
import type { Migration } from './database.ts';
import { ENGINE_MIGRATIONS } from './engine-migrations.ts';
import { LINEAR_GLUE_MIGRATIONS } from './linear-glue-migrations.ts';
import { LINEAR_MIGRATIONS } from './linear-migrations.ts';
import { LINEAR_PIPELINE_MIGRATIONS } from './linear-pipeline-migrations.ts';
import { IDEMPOTENCY_MIGRATIONS } from './idempotency-migrations.ts';
import { RESTART_NOTICE_MIGRATIONS } from './restart-notice-migrations.ts';
import { WEB_MIGRATIONS } from './web-migrations.ts';
import { SCHEDULER_MIGRATIONS } from './scheduler-migrations.ts';

/**
 * The schema, one numbered step at a time. Never edit a released step: add a new one. Each domain numbers its steps in
 * its own range so work on one never renumbers another's: coding sessions 1–99, engine 100–199, channels 200–299,
 * scheduler 300–399, Linear 400–499. `migrate` tracks every version it applied, so a gap is never a problem.
 */
export const CODING_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'coding sessions, lookup keys, runs',
    sql: `
      CREATE TABLE coding_sessions (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        harness TEXT NOT NULL,
        status TEXT NOT NULL,
        prompt TEXT NOT NULL,
        workdir TEXT NOT NULL,
        model TEXT,
        backend_session_id TEXT,
        origin_channel TEXT NOT NULL,
        origin_session_id TEXT,
        spec TEXT NOT NULL,
        cost_usd REAL NOT NULL DEFAULT 0,
        started_at INTEGER NOT NULL,
        completed_at INTEGER,
        updated_at INTEGER NOT NULL,
        error TEXT,
        end_reason TEXT,
        budget_exhausted INTEGER NOT NULL DEFAULT 0,
        foreground TEXT NOT NULL DEFAULT '{}',
        auto_responds INTEGER NOT NULL DEFAULT 0,
        resumed_from TEXT,
        forked INTEGER NOT NULL DEFAULT 0,
        pid INTEGER
      );
      CREATE INDEX coding_sessions_status ON coding_sessions(status);
      CREATE INDEX coding_sessions_completed ON coding_sessions(completed_at);
      CREATE TABLE session_keys (
        key TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES coding_sessions(id) ON DELETE CASCADE,
        kind TEXT NOT NULL
      );
      CREATE INDEX session_keys_session ON session_keys(session_id);
      CREATE TABLE session_runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        name TEXT NOT NULL,
        prompt TEXT NOT NULL,
        harness TEXT NOT NULL,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        cost_usd REAL NOT NULL DEFAULT 0,
        started_at INTEGER NOT NULL,
        ended_at INTEGER,
        duration_ms INTEGER
      );
      CREATE INDEX session_runs_session ON session_runs(session_id);
      CREATE INDEX session_runs_ended ON session_runs(ended_at);
    `,
  },
  {
    // Session lists are paged newest first: these let a page read only its own rows, with or without a status filter.
    version: 20,
    name: 'coding session paging indexes',
    sql: `
      CREATE INDEX coding_sessions_started ON coding_sessions(started_at);
      CREATE INDEX coding_sessions_status_started ON coding_sessions(status, started_at);
    `,
  },
];

/** Every domain's steps. */
export const MIGRATIONS: readonly Migration[] = [
  ...CODING_MIGRATIONS,
  ...RESTART_NOTICE_MIGRATIONS,
  ...ENGINE_MIGRATIONS,
  ...CHANNEL_MIGRATIONS,
  ...WEB_MIGRATIONS,
  ...LINEAR_MIGRATIONS,
  ...LINEAR_PIPELINE_MIGRATIONS,
  ...LINEAR_GLUE_MIGRATIONS,
  ...SCHEDULER_MIGRATIONS,
  ...IDEMPOTENCY_MIGRATIONS,
];
