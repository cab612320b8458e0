import type { Migration } from './database.ts';

/**
 * The agent engine's schema (versions 100–199). The JSONL logs under `<home>/engine/` are the truth; these tables are
 * an index rebuilt from them: one row per engine session (up to which log record it is indexed, last user activity)
 * and the message ids each session has accepted (deduplication across restarts).
 */
export const ENGINE_MIGRATIONS: readonly Migration[] = [
  {
    version: 100,
    name: 'engine session index and accepted message ids',
    sql: `
      CREATE TABLE engine_sessions (
        id TEXT PRIMARY KEY,
        key TEXT NOT NULL,
        type TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        last_user_at INTEGER,
        indexed_seq INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX engine_sessions_key ON engine_sessions(key);
      CREATE TABLE engine_message_ids (
        session_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY (session_id, message_id)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 110,
    name: 'chat commands run from connectors (exactly-once across redeliveries)',
    sql: `
      CREATE TABLE inbound_commands (
        channel TEXT NOT NULL,
        message_id TEXT NOT NULL,
        text TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'done')),
        started_at INTEGER NOT NULL,
        finished_at INTEGER,
        PRIMARY KEY (channel, message_id)
      ) WITHOUT ROWID;
      CREATE INDEX inbound_commands_started ON inbound_commands(started_at);
    `,
  },
];
