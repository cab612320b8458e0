import type { Kysely, Selectable, Transaction } from 'kysely';
import type { WebMessageStatus, WebRole } from './tables/channels.ts';
import type { Database } from './tables/index.ts';

export type { WebMessageStatus, WebRole };

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

/** What a new transcript row holds besides its chat and times. */
interface NewMessage {
  role: WebRole;
  text: string;
  clientId: string | null;
  status: WebMessageStatus;
  replyTo: string | null;
  deliveryKey: string | null;
}

function toMessage(row: Selectable<Database['web_messages']>): WebMessage {
  return {
    pos: row.pos,
    version: row.version,
    chatId: row.chat_id,
    role: row.role,
    text: row.text,
    clientId: row.client_id,
    status: row.status,
    error: row.error,
    replyTo: row.reply_to,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * The durable transcripts of the web chats (tables of web-migrations.ts), on SQLite or PostgreSQL. Every change takes
 * a new version from `web_counter` in the same transaction as the change, and resolves once that transaction committed.
 */
export class WebTranscriptStore {
  readonly #db: Kysely<Database>;
  readonly #maxPerChat: number;

  /** `maxPerChat`: messages kept per chat; older ones are deleted as new ones arrive. */
  constructor(db: Kysely<Database>, maxPerChat: number) {
    this.#db = db;
    this.#maxPerChat = maxPerChat;
  }

  /** Appends a user message as `pending`. Expects a client id not yet used in this chat (see `byClientId`). */
  async addUserMessage(chatId: string, clientId: string, text: string, now: number): Promise<WebMessage> {
    return this.#db.transaction().execute(async (trx) => {
      const version = await nextVersion(trx);
      return this.#insert(
        trx,
        chatId,
        version,
        { role: 'user', text, clientId, status: 'pending', replyTo: null, deliveryKey: null },
        now,
      );
    });
  }

  /**
   * Appends a daemon message (status `sent`). With a `deliveryKey` already in the transcript nothing is appended:
   * resolves to the existing row and `duplicate: true` (the outbox repeating a send a crash interrupted).
   */
  async addAgentMessage(
    chatId: string,
    text: string,
    replyTo: string | null,
    now: number,
    deliveryKey: string | null = null,
  ): Promise<{ message: WebMessage; duplicate: boolean }> {
    return this.#db.transaction().execute(async (trx) => {
      // The counter first: its row lock orders concurrent writers, so the key check below sees an earlier one's row.
      const version = await nextVersion(trx);
      if (deliveryKey !== null) {
        const row = await trx
          .selectFrom('web_messages')
          .selectAll()
          .where('delivery_key', '=', deliveryKey)
          .executeTakeFirst();
        if (row) return { message: toMessage(row), duplicate: true };
      }
      const message = await this.#insert(
        trx,
        chatId,
        version,
        { role: 'agent', text, clientId: null, status: 'sent', replyTo, deliveryKey },
        now,
      );
      return { message, duplicate: false };
    });
  }

  /** Changes a message's status (and error), giving it a new version. Resolves to the updated row. */
  async setStatus(pos: number, status: WebMessageStatus, error: string | null, now: number): Promise<WebMessage> {
    return this.#db.transaction().execute(async (trx) => {
      const version = await nextVersion(trx);
      const row = await trx
        .updateTable('web_messages')
        .set({ status, error, version, updated_at: now })
        .where('pos', '=', pos)
        .returningAll()
        .executeTakeFirst();
      if (!row) throw new Error(`web message ${pos} vanished`);
      return toMessage(row);
    });
  }

  /** The user message a page sent under `clientId` in this chat, if any. */
  async byClientId(chatId: string, clientId: string): Promise<WebMessage | undefined> {
    const row = await this.#db
      .selectFrom('web_messages')
      .selectAll()
      .where('chat_id', '=', chatId)
      .where('client_id', '=', clientId)
      .executeTakeFirst();
    return row ? toMessage(row) : undefined;
  }

  /** The last `limit` messages of a chat, in version order (what a newly opened page is sent). */
  async recent(chatId: string, limit: number): Promise<WebMessage[]> {
    const rows = await this.#db
      .selectFrom('web_messages')
      .selectAll()
      .where('chat_id', '=', chatId)
      .orderBy('pos', 'desc')
      .limit(limit)
      .execute();
    return rows.map(toMessage).sort((a, b) => a.version - b.version);
  }

  /** Every message of a chat changed after `version`, in version order (what a reconnecting page missed). */
  async changedAfter(chatId: string, version: number): Promise<WebMessage[]> {
    const rows = await this.#db
      .selectFrom('web_messages')
      .selectAll()
      .where('chat_id', '=', chatId)
      .where('version', '>', version)
      .orderBy('version')
      .execute();
    return rows.map(toMessage);
  }

  /** Inserts a row under `version`, then trims the chat to its newest `maxPerChat` messages. */
  async #insert(
    trx: Transaction<Database>,
    chatId: string,
    version: number,
    fields: NewMessage,
    now: number,
  ): Promise<WebMessage> {
    const row = await trx
      .insertInto('web_messages')
      .values({
        version,
        chat_id: chatId,
        role: fields.role,
        text: fields.text,
        client_id: fields.clientId,
        status: fields.status,
        reply_to: fields.replyTo,
        delivery_key: fields.deliveryKey,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await trx
      .deleteFrom('web_messages')
      .where('chat_id', '=', chatId)
      .where('pos', '<=', (eb) =>
        eb
          .selectFrom('web_messages')
          .select('pos')
          .where('chat_id', '=', chatId)
          .orderBy('pos', 'desc')
          .limit(1)
          .offset(this.#maxPerChat),
      )
      .execute();
    return toMessage(row);
  }
}

/** Takes the next transcript version (the counter row is locked until the transaction ends). */
async function nextVersion(trx: Transaction<Database>): Promise<number> {
  const row = await trx
    .updateTable('web_counter')
    .set((eb) => ({ version: eb('version', '+', 1) }))
    .where('id', '=', 1)
    .returning('version')
    .executeTakeFirst();
  if (!row) throw new Error('web_counter row is missing (migration 250 not applied)');
  return row.version;
}
