import type { Kysely, Selectable, Transaction } from 'kysely';
import { sql } from 'kysely';
import type { WebMessageStatus, WebRole } from './tables/channels.ts';
import type { Database } from './tables/index.ts';

export type { WebMessageStatus, WebRole };

/** The NOTIFY channel a change of a chat is announced on (payload: the chat id), PostgreSQL only. */
export const WEB_CHANGES_CHANNEL = 'switchboard_web';

/** A button under a daemon message: pressing it on the page sends `command` as a chat message. */
export interface WebButton {
  label: string;
  command: string;
}

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
  /** Rows of buttons under a daemon message; null when it has none (or an edit removed them). */
  buttons: WebButton[][] | null;
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
  buttons: WebButton[][] | null;
}

/** The stored form of a message's buttons: JSON, or null for none (an empty list counts as none). */
function storedButtons(buttons: WebButton[][] | null): string | null {
  const rows = (buttons ?? [])
    .map((row) => row.map((b) => ({ label: b.label, command: b.command })))
    .filter((r) => r.length > 0);
  return rows.length > 0 ? JSON.stringify(rows) : null;
}

/** Reads stored buttons back; a value that is not rows of `{label, command}` reads as none. */
function parseButtons(stored: string | null): WebButton[][] | null {
  if (stored === null) return null;
  const value: unknown = JSON.parse(stored);
  if (!Array.isArray(value)) return null;
  const rows: WebButton[][] = [];
  for (const row of value) {
    if (!Array.isArray(row)) return null;
    const buttons: WebButton[] = [];
    for (const b of row) {
      if (typeof b !== 'object' || b === null) return null;
      const { label, command } = b as Record<string, unknown>;
      if (typeof label !== 'string' || typeof command !== 'string') return null;
      buttons.push({ label, command });
    }
    rows.push(buttons);
  }
  return rows;
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
    buttons: parseButtons(row.buttons),
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
  readonly #notify: boolean;

  /**
   * `maxPerChat`: messages kept per chat; older ones are deleted as new ones arrive. `notify` (PostgreSQL only):
   * every change also sends `NOTIFY switchboard_web, '<chat id>'` in its transaction, for the other nodes' pages.
   */
  constructor(db: Kysely<Database>, maxPerChat: number, options: { notify?: boolean } = {}) {
    this.#db = db;
    this.#maxPerChat = maxPerChat;
    this.#notify = options.notify ?? false;
  }

  /** The newest version of any message of chat `chatId` (0 when it has none). */
  async latestVersion(chatId: string): Promise<number> {
    const row = await this.#db
      .selectFrom('web_messages')
      .select((eb) => eb.fn.max('version').as('version'))
      .where('chat_id', '=', chatId)
      .executeTakeFirst();
    return row?.version === null || row?.version === undefined ? 0 : Number(row.version);
  }

  /** Announces a change of `chatId` when the transaction commits (with `notify`). */
  async #announce(trx: Transaction<Database>, chatId: string): Promise<void> {
    if (this.#notify) await sql`SELECT pg_notify(${WEB_CHANGES_CHANNEL}, ${chatId})`.execute(trx);
  }

  /** Appends a user message as `pending`. Expects a client id not yet used in this chat (see `byClientId`). */
  async addUserMessage(chatId: string, clientId: string, text: string, now: number): Promise<WebMessage> {
    return this.#db.transaction().execute(async (trx) => {
      const version = await nextVersion(trx);
      await this.#announce(trx, chatId);
      return this.#insert(
        trx,
        chatId,
        version,
        { role: 'user', text, clientId, status: 'pending', replyTo: null, deliveryKey: null, buttons: null },
        now,
      );
    });
  }

  /**
   * Appends a daemon message (status `sent`), with its rows of `buttons` (null or empty: none). With a `deliveryKey`
   * already in the transcript nothing is appended: resolves to the existing row and `duplicate: true` (the outbox
   * repeating a send a crash interrupted).
   */
  async addAgentMessage(
    chatId: string,
    text: string,
    replyTo: string | null,
    now: number,
    deliveryKey: string | null = null,
    buttons: WebButton[][] | null = null,
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
      await this.#announce(trx, chatId);
      const message = await this.#insert(
        trx,
        chatId,
        version,
        { role: 'agent', text, clientId: null, status: 'sent', replyTo, deliveryKey, buttons },
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
      await this.#announce(trx, row.chat_id);
      return toMessage(row);
    });
  }

  /**
   * Replaces the text and buttons (null: none) of the daemon message at `pos` in chat `chatId`, giving it a new version
   * so open pages see the change. Resolves to the updated row (`changed: true`), to the row as it was (`changed:
   * false`, same version) when it already holds exactly this text and these buttons (an edit repeated after a crash),
   * or to undefined when the chat has no daemon message at `pos` (never sent there, or trimmed away).
   */
  async editAgentMessage(
    chatId: string,
    pos: number,
    text: string,
    buttons: WebButton[][] | null,
    now: number,
  ): Promise<{ message: WebMessage; changed: boolean } | undefined> {
    const stored = storedButtons(buttons);
    return this.#db.transaction().execute(async (trx) => {
      // The counter first, as every writer takes it: concurrent edits of one message are ordered by its row lock.
      const version = await nextVersion(trx);
      const row = await trx
        .selectFrom('web_messages')
        .selectAll()
        .where('pos', '=', pos)
        .where('chat_id', '=', chatId)
        .where('role', '=', 'agent')
        .executeTakeFirst();
      if (!row) return undefined;
      if (row.text === text && row.buttons === stored) return { message: toMessage(row), changed: false };
      const updated = await trx
        .updateTable('web_messages')
        .set({ text, buttons: stored, version, updated_at: now })
        .where('pos', '=', pos)
        .returningAll()
        .executeTakeFirstOrThrow();
      await this.#announce(trx, chatId);
      return { message: toMessage(updated), changed: true };
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
        buttons: storedButtons(fields.buttons),
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
