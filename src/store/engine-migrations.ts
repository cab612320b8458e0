import { sql } from 'kysely';
import type { Migration } from './kysely/schema-kit.ts';

/**
 * The agent engine's schema (versions 100–199). The JSONL logs under `<home>/engine/` are the truth; these tables are
 * an index rebuilt from them: one row per engine session (up to which log record it is indexed, last user activity)
 * and the message ids each session has accepted (deduplication across restarts).
 */
export const ENGINE_MIGRATIONS: readonly Migration[] = [
  {
    version: 100,
    name: 'engine session index and accepted message ids',
    up: ({ db, int, withoutRowid }) => [
      db.schema
        .createTable('engine_sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('updated_at', int, (c) => c.notNull())
        .addColumn('last_user_at', int)
        .addColumn('indexed_seq', int, (c) => c.notNull().defaultTo(0)),
      db.schema.createIndex('engine_sessions_key').on('engine_sessions').column('key'),
      withoutRowid(
        db.schema
          .createTable('engine_message_ids')
          .addColumn('session_id', 'text', (c) => c.notNull())
          .addColumn('message_id', 'text', (c) => c.notNull())
          .addColumn('seq', int, (c) => c.notNull())
          .addPrimaryKeyConstraint('engine_message_ids_pk', ['session_id', 'message_id']),
      ),
    ],
  },
  {
    version: 110,
    name: 'chat commands run from connectors (exactly-once across redeliveries)',
    up: ({ db, int, withoutRowid }) => [
      withoutRowid(
        db.schema
          .createTable('inbound_commands')
          .addColumn('channel', 'text', (c) => c.notNull())
          .addColumn('message_id', 'text', (c) => c.notNull())
          .addColumn('text', 'text', (c) => c.notNull())
          .addColumn('status', 'text', (c) => c.notNull().check(sql`status IN ('running', 'done')`))
          .addColumn('started_at', int, (c) => c.notNull())
          .addColumn('finished_at', int)
          .addPrimaryKeyConstraint('inbound_commands_pk', ['channel', 'message_id']),
      ),
      db.schema.createIndex('inbound_commands_started').on('inbound_commands').column('started_at'),
    ],
  },
];
