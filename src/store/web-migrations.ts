import type { Migration } from './database.ts';

/**
 * Schema steps of the web chat channel (versions 250–299 of the channels range): the per-chat transcript. Every change
 * to a row takes a new `version` from one counter, so a page resumes a chat's stream from the last version it saw.
 */
export const WEB_MIGRATIONS: readonly Migration[] = [
  {
    version: 250,
    name: 'web chat: transcript with a change counter',
    sql: `
      CREATE TABLE web_messages (
        pos INTEGER PRIMARY KEY AUTOINCREMENT,
        version INTEGER NOT NULL UNIQUE,
        chat_id TEXT NOT NULL,
        role TEXT NOT NULL,
        text TEXT NOT NULL,
        client_id TEXT,
        status TEXT NOT NULL,
        error TEXT,
        reply_to TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE UNIQUE INDEX web_messages_client ON web_messages(chat_id, client_id) WHERE client_id IS NOT NULL;
      CREATE INDEX web_messages_chat_version ON web_messages(chat_id, version);
      CREATE INDEX web_messages_chat_pos ON web_messages(chat_id, pos);
      CREATE TABLE web_counter (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);
      INSERT INTO web_counter (id, version) VALUES (1, 0);
    `,
  },
  {
    version: 271,
    name: 'web chat: delivery keys of daemon messages (the outbox sends each part once)',
    sql: `
      ALTER TABLE web_messages ADD COLUMN delivery_key TEXT;
      CREATE UNIQUE INDEX web_messages_delivery ON web_messages(delivery_key) WHERE delivery_key IS NOT NULL;
    `,
  },
];
