import { sql } from 'kysely';
import type { Migration } from './kysely/schema-kit.ts';

/**
 * Schema steps of the web chat channel (versions 250–299 of the channels range): the per-chat transcript. Every change
 * to a row takes a new `version` from one counter, so a page resumes a chat's stream from the last version it saw.
 */
export const WEB_MIGRATIONS: readonly Migration[] = [
  {
    version: 250,
    name: 'web chat: transcript with a change counter',
    up: ({ db, int, serial, partial }) => [
      db.schema
        .createTable('web_messages')
        .addColumn('pos', int, serial)
        .addColumn('version', int, (c) => c.notNull().unique())
        .addColumn('chat_id', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('text', 'text', (c) => c.notNull())
        .addColumn('client_id', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('reply_to', 'text')
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('updated_at', int, (c) => c.notNull()),
      partial(
        db.schema.createIndex('web_messages_client').unique().on('web_messages').columns(['chat_id', 'client_id']),
        'client_id IS NOT NULL',
      ),
      db.schema.createIndex('web_messages_chat_version').on('web_messages').columns(['chat_id', 'version']),
      db.schema.createIndex('web_messages_chat_pos').on('web_messages').columns(['chat_id', 'pos']),
      db.schema
        .createTable('web_counter')
        .addColumn('id', int, (c) => c.primaryKey().check(sql`id = 1`))
        .addColumn('version', int, (c) => c.notNull()),
      db.insertInto('web_counter').values({ id: 1, version: 0 }),
    ],
  },
  {
    version: 271,
    name: 'web chat: delivery keys of daemon messages (the outbox sends each part once)',
    up: ({ db, partial }) => [
      db.schema.alterTable('web_messages').addColumn('delivery_key', 'text'),
      partial(
        db.schema.createIndex('web_messages_delivery').unique().on('web_messages').column('delivery_key'),
        'delivery_key IS NOT NULL',
      ),
    ],
  },
  {
    version: 272,
    name: 'web chat: buttons under daemon messages (approvals), replaced by an edit',
    up: ({ db }) => [db.schema.alterTable('web_messages').addColumn('buttons', 'text')],
  },
];
