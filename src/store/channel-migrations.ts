import type { Migration } from './database.ts';

/** Schema steps of the chat channels (range 200–299): the durable outbox of outbound messages.
 * Statuses: pending → sending (claimed for one send, committed before the connector is called) → sent (kept only when
 * the row has an idempotency key, until pruned) or failed (dead letter). */
export const CHANNEL_MIGRATIONS: readonly Migration[] = [
  {
    version: 200,
    name: 'channels: outbox of outbound messages',
    sql: `
      CREATE TABLE outbox_messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        target_key TEXT NOT NULL,
        target TEXT NOT NULL,
        channel TEXT NOT NULL,
        text TEXT NOT NULL,
        reply_to TEXT,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        parts_sent INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        last_error TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX outbox_messages_queue ON outbox_messages(status, target_key, id);
      CREATE INDEX outbox_messages_failed ON outbox_messages(status, updated_at);
    `,
  },
  {
    version: 231,
    name: 'channels: outbox idempotency keys and claimed ("sending") and kept ("sent") rows',
    sql: `
      ALTER TABLE outbox_messages ADD COLUMN dedupe_key TEXT;
      CREATE UNIQUE INDEX outbox_messages_dedupe ON outbox_messages(dedupe_key) WHERE dedupe_key IS NOT NULL;
    `,
  },
];
