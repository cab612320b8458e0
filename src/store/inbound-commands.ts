import type { Kysely } from 'kysely';
import type { Database } from './tables/index.ts';

/** Where a chat command stands: never seen, run to the end (its reply is in the outbox), or cut off by a crash. */
export type CommandState = 'new' | 'done' | 'running';

/** How long a command's record is kept to recognise a redelivery (connectors redeliver within minutes). */
const KEEP_MS = 7 * 24 * 3_600_000;

/**
 * The chat commands connectors delivered, by channel and connector message id, so a command redelivered after a
 * crash (a connector acknowledges only after its handler finished) is not run a second time.
 */
export class InboundCommandStore {
  #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /**
   * Records that a command starts; resolves 'new' when it was never seen, else how far an earlier delivery got. The
   * record is committed when this resolves.
   */
  async begin(channel: string, messageId: string, text: string, at: number): Promise<CommandState> {
    const inserted = await this.#db
      .insertInto('inbound_commands')
      .values({ channel, message_id: messageId, text, status: 'running', started_at: at })
      .onConflict((oc) => oc.columns(['channel', 'message_id']).doNothing())
      .returning('status')
      .executeTakeFirst();
    if (inserted) {
      await this.#db
        .deleteFrom('inbound_commands')
        .where('started_at', '<', at - KEEP_MS)
        .execute();
      return 'new';
    }
    const row = await this.#db
      .selectFrom('inbound_commands')
      .select('status')
      .where('channel', '=', channel)
      .where('message_id', '=', messageId)
      .executeTakeFirst();
    return row?.status ?? 'new';
  }

  /** Marks a command as run to the end (its reply handed to the outbox); committed when this resolves. */
  async finish(channel: string, messageId: string, at: number): Promise<void> {
    await this.#db
      .updateTable('inbound_commands')
      .set({ status: 'done', finished_at: at })
      .where('channel', '=', channel)
      .where('message_id', '=', messageId)
      .execute();
  }
}
