import type { Migration } from './kysely/schema-kit.ts';

/** Schema steps of the chat channels (range 200–299): the durable outbox of outbound messages.
 * Statuses: pending → sending (claimed for one send, committed before the connector is called) → sent (kept only when
 * the row has an idempotency key, until pruned) or failed (dead letter). A message may carry buttons (JSON rows) and
 * name the key of an earlier message it replaces, and a file (JSON: name, type, text content); a kept row remembers the
 * connector's ref of what it delivered. */
export const CHANNEL_MIGRATIONS: readonly Migration[] = [
  {
    version: 200,
    name: 'channels: outbox of outbound messages',
    up: ({ db, int, serial }) => [
      db.schema
        .createTable('outbox_messages')
        .addColumn('id', int, serial)
        .addColumn('target_key', 'text', (c) => c.notNull())
        .addColumn('target', 'text', (c) => c.notNull())
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('text', 'text', (c) => c.notNull())
        .addColumn('reply_to', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', int, (c) => c.notNull().defaultTo(0))
        .addColumn('parts_sent', int, (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', int, (c) => c.notNull())
        .addColumn('last_error', 'text')
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('updated_at', int, (c) => c.notNull()),
      db.schema.createIndex('outbox_messages_queue').on('outbox_messages').columns(['status', 'target_key', 'id']),
      db.schema.createIndex('outbox_messages_failed').on('outbox_messages').columns(['status', 'updated_at']),
    ],
  },
  {
    version: 231,
    name: 'channels: outbox idempotency keys and claimed ("sending") and kept ("sent") rows',
    up: ({ db, partial }) => [
      db.schema.alterTable('outbox_messages').addColumn('dedupe_key', 'text'),
      partial(
        db.schema.createIndex('outbox_messages_dedupe').unique().on('outbox_messages').column('dedupe_key'),
        'dedupe_key IS NOT NULL',
      ),
    ],
  },
  {
    version: 232,
    name: 'channels: outbox buttons, replaced messages and the connector ref of a delivered message',
    up: ({ db }) => [
      db.schema.alterTable('outbox_messages').addColumn('buttons', 'text'),
      db.schema.alterTable('outbox_messages').addColumn('replaces', 'text'),
      db.schema.alterTable('outbox_messages').addColumn('ref', 'text'),
    ],
  },
  {
    version: 233,
    name: 'channels: outbox messages sent in the thread an earlier message opened',
    up: ({ db }) => [db.schema.alterTable('outbox_messages').addColumn('thread_of', 'text')],
  },
  {
    version: 240,
    name: 'channels: outbox messages carrying a file (a patch sent as a document)',
    up: ({ db }) => [db.schema.alterTable('outbox_messages').addColumn('file', 'text')],
  },
];
