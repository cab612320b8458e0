import type { DatabaseSync } from 'node:sqlite';

/** Where a chat command stands: never seen, run to the end (its reply is in the outbox), or cut off by a crash. */
export type CommandState = 'new' | 'done' | 'running';

/** How long a command's record is kept to recognise a redelivery (connectors redeliver within minutes). */
const KEEP_MS = 7 * 24 * 3_600_000;

/**
 * The chat commands connectors delivered, by channel and connector message id, so a command redelivered after a
 * crash (a connector acknowledges only after its handler finished) is not run a second time.
 */
export class InboundCommandStore {
  #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /** Records that a command starts; returns 'new' when it was never seen, else how far an earlier delivery got. */
  begin(channel: string, messageId: string, text: string, at: number): CommandState {
    const inserted = this.#db
      .prepare(`INSERT INTO inbound_commands (channel, message_id, text, status, started_at) VALUES (?, ?, ?, 'running', ?) ON CONFLICT DO NOTHING`)
      .run(channel, messageId, text, at);
    if (Number(inserted.changes) === 1) {
      this.#db.prepare('DELETE FROM inbound_commands WHERE started_at < ?').run(at - KEEP_MS);
      return 'new';
    }
    const row = this.#db.prepare('SELECT status FROM inbound_commands WHERE channel = ? AND message_id = ?').get(channel, messageId) as
      | { status: 'running' | 'done' }
      | undefined;
    return row?.status ?? 'new';
  }

  /** Marks a command as run to the end (its reply handed to the outbox). */
  finish(channel: string, messageId: string, at: number): void {
    this.#db.prepare(`UPDATE inbound_commands SET status = 'done', finished_at = ? WHERE channel = ? AND message_id = ?`).run(at, channel, messageId);
  }
}
