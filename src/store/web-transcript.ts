import type { DatabaseSync } from 'node:sqlite';
import { transaction } from './database.ts';

/** Who wrote a transcript message: the person at the page, or the daemon (orchestrator replies, notifications). */
export type WebRole = 'user' | 'agent';

/**
 * Delivery state of a message. A user message is `pending` while the inbound handler runs, then `accepted` (durably
 * handed over) or `failed` (the page offers a retry); a daemon message is `sent`.
 */
export type WebMessageStatus = 'pending' | 'accepted' | 'failed' | 'sent';

/** One row of a chat transcript. `pos` orders the chat; `version` grows with every change (the stream's event id). */
export interface WebMessage {
  pos: number;
  version: number;
  chatId: string;
  role: WebRole;
  text: string;
  /** The page's own id of a user message (deduplicates retries); null for daemon messages. */
  clientId: string | null;
  status: WebMessageStatus;
  error: string | null;
  replyTo: string | null;
  createdAt: number;
  updatedAt: number;
}

interface Row {
  pos: number;
  version: number;
  chat_id: string;
  role: string;
  text: string;
  client_id: string | null;
  status: string;
  error: string | null;
  reply_to: string | null;
  created_at: number;
  updated_at: number;
}

function toMessage(row: Row): WebMessage {
  return {
    pos: row.pos,
    version: row.version,
    chatId: row.chat_id,
    role: row.role as WebRole,
    text: row.text,
    clientId: row.client_id,
    status: row.status as WebMessageStatus,
    error: row.error,
    replyTo: row.reply_to,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The durable transcripts of the web chats (tables of web-migrations.ts). Every write commits before it returns. */
export class WebTranscriptStore {
  #db: DatabaseSync;
  #maxPerChat: number;

  /** `maxPerChat`: messages kept per chat; older ones are deleted as new ones arrive. */
  constructor(db: DatabaseSync, maxPerChat: number) {
    this.#db = db;
    this.#maxPerChat = maxPerChat;
  }

  #nextVersion(): number {
    const row = this.#db.prepare('UPDATE web_counter SET version = version + 1 WHERE id = 1 RETURNING version').get() as
      | { version: number }
      | undefined;
    if (!row) throw new Error('web_counter row is missing (migration 250 not applied)');
    return row.version;
  }

  #byPos(pos: number): WebMessage {
    const row = this.#db.prepare('SELECT * FROM web_messages WHERE pos = ?').get(pos) as Row | undefined;
    if (!row) throw new Error(`web message ${pos} vanished`);
    return toMessage(row);
  }

  #insert(chatId: string, fields: { role: WebRole; text: string; clientId: string | null; status: WebMessageStatus; replyTo: string | null }, now: number): WebMessage {
    return transaction(this.#db, () => {
      const version = this.#nextVersion();
      const result = this.#db
        .prepare(
          `INSERT INTO web_messages (version, chat_id, role, text, client_id, status, reply_to, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(version, chatId, fields.role, fields.text, fields.clientId, fields.status, fields.replyTo, now, now);
      this.#db
        .prepare(
          `DELETE FROM web_messages WHERE chat_id = ? AND pos <= (
             SELECT pos FROM web_messages WHERE chat_id = ? ORDER BY pos DESC LIMIT 1 OFFSET ?)`,
        )
        .run(chatId, chatId, this.#maxPerChat);
      return this.#byPos(Number(result.lastInsertRowid));
    });
  }

  /** Appends a user message as `pending`. Expects a client id not yet used in this chat (see `byClientId`). */
  addUserMessage(chatId: string, clientId: string, text: string, now: number): WebMessage {
    return this.#insert(chatId, { role: 'user', text, clientId, status: 'pending', replyTo: null }, now);
  }

  /**
   * Appends a daemon message (status `sent`). With a `deliveryKey` already in the transcript nothing is appended:
   * returns the existing row and `duplicate: true` (the outbox repeating a send a crash interrupted).
   */
  addAgentMessage(chatId: string, text: string, replyTo: string | null, now: number, deliveryKey: string | null = null): { message: WebMessage; duplicate: boolean } {
    return transaction(this.#db, () => {
      if (deliveryKey !== null) {
        const row = this.#db.prepare('SELECT * FROM web_messages WHERE delivery_key = ?').get(deliveryKey) as Row | undefined;
        if (row) return { message: toMessage(row), duplicate: true };
      }
      const message = this.#insert(chatId, { role: 'agent', text, clientId: null, status: 'sent', replyTo }, now);
      if (deliveryKey !== null) this.#db.prepare('UPDATE web_messages SET delivery_key = ? WHERE pos = ?').run(deliveryKey, message.pos);
      return { message, duplicate: false };
    });
  }

  /** Changes a message's status (and error), giving it a new version. Returns the updated row. */
  setStatus(pos: number, status: WebMessageStatus, error: string | null, now: number): WebMessage {
    return transaction(this.#db, () => {
      const version = this.#nextVersion();
      this.#db.prepare('UPDATE web_messages SET status = ?, error = ?, version = ?, updated_at = ? WHERE pos = ?').run(status, error, version, now, pos);
      return this.#byPos(pos);
    });
  }

  /** The user message a page sent under `clientId` in this chat, if any. */
  byClientId(chatId: string, clientId: string): WebMessage | undefined {
    const row = this.#db.prepare('SELECT * FROM web_messages WHERE chat_id = ? AND client_id = ?').get(chatId, clientId) as Row | undefined;
    return row ? toMessage(row) : undefined;
  }

  /** The last `limit` messages of a chat, in version order (what a newly opened page is sent). */
  recent(chatId: string, limit: number): WebMessage[] {
    const rows = this.#db
      .prepare('SELECT * FROM (SELECT * FROM web_messages WHERE chat_id = ? ORDER BY pos DESC LIMIT ?) ORDER BY version')
      .all(chatId, limit) as unknown as Row[];
    return rows.map(toMessage);
  }

  /** Every message of a chat changed after `version`, in version order (what a reconnecting page missed). */
  changedAfter(chatId: string, version: number): WebMessage[] {
    const rows = this.#db.prepare('SELECT * FROM web_messages WHERE chat_id = ? AND version > ? ORDER BY version').all(chatId, version) as unknown as Row[];
    return rows.map(toMessage);
  }
}
