import type { DatabaseSync } from 'node:sqlite';

/**
 * Delivery states of an outbox row: waiting (to be sent or retried), claimed for a send in flight (found after a crash:
 * the send may or may not have happened), delivered (kept only while its idempotency key must keep deduplicating;
 * unkeyed rows are deleted when sent), or given up on (dead letter).
 */
export type OutboxStatus = 'pending' | 'sending' | 'sent' | 'failed';

const STATUSES: readonly OutboxStatus[] = ['pending', 'sending', 'sent', 'failed'];

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
}

interface Row {
  id: number;
  target_key: string;
  target: string;
  channel: string;
  text: string;
  reply_to: string | null;
  status: string;
  dedupe_key: string | null;
  attempts: number;
  parts_sent: number;
  next_attempt_at: number;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

function fromRow(row: Row): OutboxRecord {
  return {
    id: row.id,
    targetKey: row.target_key,
    target: row.target,
    channel: row.channel,
    text: row.text,
    replyTo: row.reply_to,
    status: STATUSES.find((st) => st === row.status) ?? 'pending',
    dedupeKey: row.dedupe_key,
    attempts: row.attempts,
    partsSent: row.parts_sent,
    nextAttemptAt: row.next_attempt_at,
    lastError: row.last_error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** SQLite persistence of outbound messages: a queue per conversation, ordered by insertion, plus dead letters. */
export class OutboxStore {
  #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /**
   * Records a new pending message (durable when this returns); returns its id, or null when its idempotency key is
   * already recorded (nothing is written then).
   */
  enqueue(entry: OutboxEntry, now: number): number | null {
    const result = this.#db
      .prepare(
        `INSERT OR IGNORE INTO outbox_messages (target_key, target, channel, text, reply_to, status, dedupe_key, attempts,
          parts_sent, next_attempt_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'pending', ?, 0, 0, ?, ?, ?)`,
      )
      .run(entry.targetKey, entry.target, entry.channel, entry.text, entry.replyTo ?? null, entry.dedupeKey ?? null, now, now, now);
    return Number(result.changes) === 0 ? null : Number(result.lastInsertRowid);
  }

  /** Claims a message for one send (status `sending`), committed before the connector is called. */
  claim(id: number, now: number): void {
    this.#db.prepare(`UPDATE outbox_messages SET status = 'sending', updated_at = ? WHERE id = ?`).run(now, id);
  }

  /** Messages left claimed by a crash (their send may or may not have happened), oldest first. */
  claimed(): OutboxRecord[] {
    const rows = this.#db.prepare(`SELECT * FROM outbox_messages WHERE status = 'sending' ORDER BY id`).all() as unknown as Row[];
    return rows.map(fromRow);
  }

  /** Puts a claimed message back to pending (to be sent again under the same delivery keys). */
  unclaim(id: number, now: number): void {
    this.#db.prepare(`UPDATE outbox_messages SET status = 'pending', updated_at = ? WHERE id = ? AND status = 'sending'`).run(now, id);
  }

  /** Conversation keys that have pending messages. */
  pendingTargets(): string[] {
    const rows = this.#db.prepare(`SELECT DISTINCT target_key FROM outbox_messages WHERE status = 'pending'`).all() as {
      target_key: string;
    }[];
    return rows.map((r) => r.target_key);
  }

  /** The oldest pending message of a conversation (the only one that may be in flight), or null. */
  head(targetKey: string): OutboxRecord | null {
    const row = this.#db
      .prepare(`SELECT * FROM outbox_messages WHERE status = 'pending' AND target_key = ? ORDER BY id LIMIT 1`)
      .get(targetKey) as Row | undefined;
    return row ? fromRow(row) : null;
  }

  /** Returns the message with this id, or null. */
  get(id: number): OutboxRecord | null {
    const row = this.#db.prepare('SELECT * FROM outbox_messages WHERE id = ?').get(id) as Row | undefined;
    return row ? fromRow(row) : null;
  }

  /** Records that the first `partsSent` parts were delivered; resets the failure count. */
  recordProgress(id: number, partsSent: number, now: number): void {
    this.#db
      .prepare(`UPDATE outbox_messages SET status = 'pending', parts_sent = ?, attempts = 0, last_error = NULL, updated_at = ? WHERE id = ?`)
      .run(partsSent, now, id);
  }

  /** Records a failed attempt and when to try again. */
  recordFailure(id: number, attempts: number, nextAttemptAt: number, error: string, now: number): void {
    this.#db
      .prepare(`UPDATE outbox_messages SET status = 'pending', attempts = ?, next_attempt_at = ?, last_error = ?, updated_at = ? WHERE id = ?`)
      .run(attempts, nextAttemptAt, error, now, id);
  }

  /** Marks a message failed for good (dead letter); it stays in the store. */
  markFailed(id: number, attempts: number, error: string, now: number): void {
    this.#db
      .prepare(`UPDATE outbox_messages SET status = 'failed', attempts = ?, last_error = ?, updated_at = ? WHERE id = ?`)
      .run(attempts, error, now, id);
  }

  /** Settles a delivered message in one statement: deleted, or kept as `sent` while its idempotency key must dedupe. */
  markSent(id: number, now: number): void {
    this.#db.prepare('DELETE FROM outbox_messages WHERE id = ? AND dedupe_key IS NULL').run(id);
    this.#db.prepare(`UPDATE outbox_messages SET status = 'sent', updated_at = ? WHERE id = ?`).run(now, id);
  }

  /** Puts a dead letter back in its conversation's queue (at its original place); false if there is no such dead letter. */
  requeue(id: number, now: number): boolean {
    const result = this.#db
      .prepare(
        `UPDATE outbox_messages SET status = 'pending', attempts = 0, next_attempt_at = ?, updated_at = ?
         WHERE id = ? AND status = 'failed'`,
      )
      .run(now, now, id);
    return Number(result.changes) > 0;
  }

  /** Dead letters, newest first. */
  listFailed(limit = 100): OutboxRecord[] {
    const rows = this.#db
      .prepare(`SELECT * FROM outbox_messages WHERE status = 'failed' ORDER BY updated_at DESC, id DESC LIMIT ?`)
      .all(limit) as unknown as Row[];
    return rows.map(fromRow);
  }

  /** Number of pending messages and of dead letters. */
  counts(): { pending: number; failed: number } {
    const rows = this.#db.prepare('SELECT status, COUNT(*) AS n FROM outbox_messages GROUP BY status').all() as {
      status: string;
      n: number;
    }[];
    const counts = { pending: 0, failed: 0 };
    for (const { status, n } of rows) {
      if (status === 'pending' || status === 'sending') counts.pending += n;
      else if (status === 'failed') counts.failed = n;
    }
    return counts;
  }

  /** Deletes delivered (keyed) messages settled before `before`; their keys stop deduplicating. Returns how many. */
  pruneSent(before: number): number {
    const result = this.#db.prepare(`DELETE FROM outbox_messages WHERE status = 'sent' AND updated_at < ?`).run(before);
    return Number(result.changes);
  }

  /** Deletes dead letters last touched before `before`; returns how many. */
  pruneFailed(before: number): number {
    const result = this.#db.prepare(`DELETE FROM outbox_messages WHERE status = 'failed' AND updated_at < ?`).run(before);
    return Number(result.changes);
  }
}
