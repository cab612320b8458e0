import type { Kysely, Selectable } from 'kysely';
import type { WriteFence } from './cluster-fence.ts';
import type { OutboxStatus } from './tables/channels.ts';
import type { Database } from './tables/index.ts';

export type { OutboxStatus };

/** One outbound message as stored. */
export interface OutboxRecord {
  id: number;
  /** The conversation key used for ordering (the target's channel string). */
  targetKey: string;
  /** The target, serialized by the caller (JSON). */
  target: string;
  channel: string;
  text: string;
  replyTo: string | null;
  status: OutboxStatus;
  /** The sender's idempotency key, if it gave one. */
  dedupeKey: string | null;
  /** Failed attempts since the last progress. */
  attempts: number;
  /** Parts of the split text already delivered. */
  partsSent: number;
  nextAttemptAt: number;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
  /** Rows of buttons as JSON (serialized by the caller), or null. */
  buttons: string | null;
  /** The idempotency key of an earlier message of the conversation this one replaces (edits in place), or null. */
  replaces: string | null;
  /** The idempotency key of an earlier message of the conversation whose thread this one goes in, or null. */
  threadOf: string | null;
  /** The connector's id of the delivered message (its last part); kept on `sent` rows, null when unknown. */
  ref: string | null;
  /** The file sent with the message (`OutboundFile` as JSON, serialized by the caller), or null. */
  file: string | null;
}

/** What to record for a new message. */
export interface OutboxEntry {
  targetKey: string;
  target: string;
  channel: string;
  text: string;
  replyTo?: string | undefined;
  /** Idempotency key: a second entry with the same key is not recorded. */
  dedupeKey?: string | undefined;
  /** Rows of buttons, serialized (JSON). */
  buttons?: string | undefined;
  /** Idempotency key of the earlier message this one replaces. */
  replaces?: string | undefined;
  /** Idempotency key of the earlier message whose thread this one goes in. */
  threadOf?: string | undefined;
  /** The file sent with the message, serialized (JSON). */
  file?: string | undefined;
}

function toRecord(row: Selectable<Database['outbox_messages']>): OutboxRecord {
  return {
    id: row.id,
    targetKey: row.target_key,
    target: row.target,
    channel: row.channel,
    text: row.text,
    replyTo: row.reply_to,
    status: row.status,
    dedupeKey: row.dedupe_key,
    attempts: row.attempts,
    partsSent: row.parts_sent,
    nextAttemptAt: row.next_attempt_at,
    lastError: row.last_error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    buttons: row.buttons,
    replaces: row.replaces,
    threadOf: row.thread_of,
    ref: row.ref,
    file: row.file,
  };
}

/**
 * Persistence of outbound messages (SQLite or PostgreSQL): a queue per conversation, ordered by insertion (id), plus
 * dead letters. Every method resolves once its statement committed.
 */
export class OutboxStore {
  readonly #db: Kysely<Database>;
  readonly #fence: WriteFence | null;

  /** `fence`: checked in the transaction of each `claim` (a cluster's `primary` lease: store/cluster-fence.ts). */
  constructor(db: Kysely<Database>, fence?: WriteFence) {
    this.#db = db;
    this.#fence = fence ?? null;
  }

  /**
   * Records a new pending message (committed when this resolves); resolves to its id, or null when its idempotency
   * key is already recorded (nothing is written then). `fenced` (with a fence): in one transaction with it, so a node
   * that lost the lease records nothing and gets the fence's `FencedError`.
   */
  async enqueue(entry: OutboxEntry, now: number, options: { fenced?: boolean } = {}): Promise<number | null> {
    const fence = options.fenced ? this.#fence : null;
    if (!fence) return this.#insert(this.#db, entry, now);
    return this.#db.transaction().execute(async (trx) => {
      await fence(trx);
      return this.#insert(trx, entry, now);
    });
  }

  async #insert(db: Kysely<Database>, entry: OutboxEntry, now: number): Promise<number | null> {
    const row = await db
      .insertInto('outbox_messages')
      .values({
        target_key: entry.targetKey,
        target: entry.target,
        channel: entry.channel,
        text: entry.text,
        reply_to: entry.replyTo ?? null,
        status: 'pending',
        dedupe_key: entry.dedupeKey ?? null,
        buttons: entry.buttons ?? null,
        replaces: entry.replaces ?? null,
        thread_of: entry.threadOf ?? null,
        file: entry.file ?? null,
        attempts: 0,
        parts_sent: 0,
        next_attempt_at: now,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) => oc.column('dedupe_key').where('dedupe_key', 'is not', null).doNothing())
      .returning('id')
      .executeTakeFirst();
    return row ? row.id : null;
  }

  /**
   * Claims part `part` of a message for one send (status `sending`), committed before the connector is called: a
   * compare-and-swap on the row being `pending` with `part` parts sent, so of two senders that read the same head (a
   * stalled holder and the node that took over) one claims it and the other sends nothing. Resolves false when the row
   * was not in that state. With a fence, in one transaction with it: a node that lost the lease gets its `FencedError`.
   */
  async claim(id: number, now: number, part = 0): Promise<boolean> {
    const update = (db: Kysely<Database>) =>
      db
        .updateTable('outbox_messages')
        .set({ status: 'sending', updated_at: now })
        .where('id', '=', id)
        .where('status', '=', 'pending')
        .where('parts_sent', '=', part)
        .executeTakeFirst();
    const fence = this.#fence;
    const result = fence
      ? await this.#db.transaction().execute(async (trx) => {
          await fence(trx);
          return update(trx);
        })
      : await update(this.#db);
    return result.numUpdatedRows > 0n;
  }

  /** Messages left claimed by a crash (their send may or may not have happened), oldest first. */
  async claimed(): Promise<OutboxRecord[]> {
    const rows = await this.#db
      .selectFrom('outbox_messages')
      .selectAll()
      .where('status', '=', 'sending')
      .orderBy('id')
      .execute();
    return rows.map(toRecord);
  }

  /** Puts a claimed message back to pending (to be sent again under the same delivery keys). */
  async unclaim(id: number, now: number): Promise<void> {
    await this.#db
      .updateTable('outbox_messages')
      .set({ status: 'pending', updated_at: now })
      .where('id', '=', id)
      .where('status', '=', 'sending')
      .execute();
  }

  /** Conversation keys that have pending messages. */
  async pendingTargets(): Promise<string[]> {
    const rows = await this.#db
      .selectFrom('outbox_messages')
      .select('target_key')
      .distinct()
      .where('status', '=', 'pending')
      .execute();
    return rows.map((r) => r.target_key);
  }

  /** The oldest pending message of a conversation (the only one that may be in flight), or null. */
  async head(targetKey: string): Promise<OutboxRecord | null> {
    const row = await this.#db
      .selectFrom('outbox_messages')
      .selectAll()
      .where('status', '=', 'pending')
      .where('target_key', '=', targetKey)
      .orderBy('id')
      .limit(1)
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** The message with this id, or null. */
  async get(id: number): Promise<OutboxRecord | null> {
    const row = await this.#db.selectFrom('outbox_messages').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** Records that the first `partsSent` parts were delivered; resets the failure count. */
  async recordProgress(id: number, partsSent: number, now: number): Promise<void> {
    await this.#db
      .updateTable('outbox_messages')
      .set({ status: 'pending', parts_sent: partsSent, attempts: 0, last_error: null, updated_at: now })
      .where('id', '=', id)
      .execute();
  }

  /** Records a failed attempt and when to try again. */
  async recordFailure(id: number, attempts: number, nextAttemptAt: number, error: string, now: number): Promise<void> {
    await this.#db
      .updateTable('outbox_messages')
      .set({ status: 'pending', attempts, next_attempt_at: nextAttemptAt, last_error: error, updated_at: now })
      .where('id', '=', id)
      .execute();
  }

  /** Marks a message failed for good (dead letter); it stays in the store. */
  async markFailed(id: number, attempts: number, error: string, now: number): Promise<void> {
    await this.#db
      .updateTable('outbox_messages')
      .set({ status: 'failed', attempts, last_error: error, updated_at: now })
      .where('id', '=', id)
      .execute();
  }

  /**
   * Settles a delivered message: deleted, or kept as `sent` while its idempotency key must dedupe, together with `ref`
   * (the connector's id of what it delivered; null when unknown) in the same statement. Either statement alone leaves
   * a consistent row (a crash in between changes nothing: the delete only ever removes unkeyed rows).
   */
  async markSent(id: number, now: number, ref: string | null = null): Promise<void> {
    const deleted = await this.#db
      .deleteFrom('outbox_messages')
      .where('id', '=', id)
      .where('dedupe_key', 'is', null)
      .executeTakeFirst();
    if (deleted.numDeletedRows > 0n) return;
    await this.#db
      .updateTable('outbox_messages')
      .set({ status: 'sent', ref, updated_at: now })
      .where('id', '=', id)
      .execute();
  }

  /**
   * The connector's ref of the message delivered under idempotency key `key` to the conversation `targetKey`: null when
   * there is none (never delivered, dead, pruned, sent elsewhere, or delivered by a connector that gave no ref).
   */
  async sentRef(key: string, targetKey: string): Promise<string | null> {
    const row = await this.#db
      .selectFrom('outbox_messages')
      .select('ref')
      .where('dedupe_key', '=', key)
      .where('target_key', '=', targetKey)
      .where('status', '=', 'sent')
      .executeTakeFirst();
    return row?.ref ?? null;
  }

  /** Puts a dead letter back in its conversation's queue (at its original place); false if there is no such dead letter. */
  async requeue(id: number, now: number): Promise<boolean> {
    const result = await this.#db
      .updateTable('outbox_messages')
      .set({ status: 'pending', attempts: 0, next_attempt_at: now, updated_at: now })
      .where('id', '=', id)
      .where('status', '=', 'failed')
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Dead letters, newest first. */
  async listFailed(limit = 100): Promise<OutboxRecord[]> {
    const rows = await this.#db
      .selectFrom('outbox_messages')
      .selectAll()
      .where('status', '=', 'failed')
      .orderBy('updated_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map(toRecord);
  }

  /** Number of pending messages (claimed ones included) and of dead letters. */
  async counts(): Promise<{ pending: number; failed: number }> {
    const rows = await this.#db
      .selectFrom('outbox_messages')
      .select((eb) => ['status', eb.fn.countAll<number>().as('n')])
      .groupBy('status')
      .execute();
    const counts = { pending: 0, failed: 0 };
    for (const { status, n } of rows) {
      if (status === 'pending' || status === 'sending') counts.pending += Number(n);
      else if (status === 'failed') counts.failed = Number(n);
    }
    return counts;
  }

  /** Deletes delivered (keyed) messages settled before `before`; their keys stop deduplicating. Resolves to how many. */
  async pruneSent(before: number): Promise<number> {
    const result = await this.#db
      .deleteFrom('outbox_messages')
      .where('status', '=', 'sent')
      .where('updated_at', '<', before)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** Deletes dead letters last touched before `before`; resolves to how many. */
  async pruneFailed(before: number): Promise<number> {
    const result = await this.#db
      .deleteFrom('outbox_messages')
      .where('status', '=', 'failed')
      .where('updated_at', '<', before)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
