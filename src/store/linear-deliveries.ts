import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { statementCache, transaction } from './database.ts';

/** pending: waiting (maybe for a retry time); processing: handed to the handler; done: handled or ignored; dead: gave up. */
export type DeliveryStatus = 'pending' | 'processing' | 'done' | 'dead';

/** One accepted webhook delivery. */
export interface StoredDelivery {
  seq: number;
  deliveryId: string;
  eventType: string;
  action: string | null;
  /** Deliveries with the same key are handled one at a time, in arrival order (agent session, issue). */
  orderKey: string;
  /** The verified JSON body as received. */
  payload: string;
  status: DeliveryStatus;
  /** Handler attempts started so far (counted when claimed, so a crash mid-handler counts too). */
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  outcome: string | null;
  receivedAt: number;
  updatedAt: number;
}

/**
 * Runs `fn` (a transaction of the worker's own bookkeeping) with synchronous=NORMAL: in WAL mode its commit survives a
 * crash of the process (the WAL is written before COMMIT returns) and becomes durable against power loss with the next
 * synchronous=FULL commit — the intake's next delivery. A power cut may only undo a claim or a result, which runs that
 * delivery again (at least once; its effects are idempotent). The intake's commits, which a 200 waits for, keep the
 * connection's setting (FULL), restored right after.
 */
function withoutSync<T>(db: DatabaseSync, readSetting: StatementSync, fn: () => T): T {
  const previous = (readSetting.get() as { synchronous: number }).synchronous;
  db.exec('PRAGMA synchronous = NORMAL');
  try {
    return fn();
  } finally {
    db.exec(`PRAGMA synchronous = ${Number(previous)}`);
  }
}

/** The result of one finished attempt. */
export type DeliveryOutcome =
  | { seq: number; kind: 'done'; outcome: string }
  | { seq: number; kind: 'retry'; error: string; retryAt: number }
  | { seq: number; kind: 'dead'; error: string };

/** What the intake stores for a new delivery. */
export interface NewDelivery {
  deliveryId: string;
  eventType: string;
  action: string | null;
  orderKey: string;
  payload: string;
  /** SHA-256 of the exact signed bytes; a second delivery with the same digest is a replay, not stored again. */
  bodyDigest: string;
  receivedAt: number;
}

interface Row {
  seq: number;
  delivery_id: string;
  event_type: string;
  action: string | null;
  order_key: string;
  payload: string;
  status: string;
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  outcome: string | null;
  received_at: number;
  updated_at: number;
}

/**
 * The oldest `limit` due pending deliveries not behind an unfinished earlier delivery of the same order key (so at most
 * one per key). Walks the partial index of pending deliveries in seq order: no sort, it stops after `limit` rows.
 */
export const RUNNABLE = `SELECT * FROM linear_webhook_deliveries q INDEXED BY linear_webhook_deliveries_pending
  WHERE q.status = 'pending' AND q.next_attempt_at <= ?
    AND NOT EXISTS (SELECT 1 FROM linear_webhook_deliveries p
                    WHERE p.order_key = q.order_key AND p.seq < q.seq AND p.status IN ('pending', 'processing'))
  ORDER BY q.seq LIMIT ?`;

function fromRow(row: Row): StoredDelivery {
  return {
    seq: row.seq,
    deliveryId: row.delivery_id,
    eventType: row.event_type,
    action: row.action,
    orderKey: row.order_key,
    payload: row.payload,
    status: row.status as DeliveryStatus,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    lastError: row.last_error,
    outcome: row.outcome,
    receivedAt: row.received_at,
    updatedAt: row.updated_at,
  };
}

/**
 * The durable record of Linear webhook deliveries: the dedup set (a delivery id is stored once, ever, until pruned) and
 * the work queue of the webhook worker. Every method is one SQLite transaction.
 */
export class LinearDeliveryStore {
  #db: DatabaseSync;
  /** Each SQL text prepared once per store: the intake and the worker run these for every delivery. */
  readonly #sql: (sql: string) => StatementSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
    this.#sql = statementCache(db);
  }


  /** Stores a new delivery as pending, due now. Returns false (and changes nothing) when its id or digest is known. */
  enqueue(delivery: NewDelivery): boolean {
    return this.enqueueMany([delivery])[0] as boolean;
  }

  /**
   * Stores several deliveries in ONE transaction (one sync for the whole group, so concurrent arrivals share it).
   * Returns, per delivery, whether it was new; a repeated id or body digest (even within the group) is stored once.
   */
  enqueueMany(deliveries: readonly NewDelivery[]): boolean[] {
    const insert = this.#sql(
      `INSERT INTO linear_webhook_deliveries (delivery_id, event_type, action, order_key, payload, body_digest, status, attempts,
         next_attempt_at, received_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?) ON CONFLICT DO NOTHING`,
    );
    const insertAll = () =>
      deliveries.map(
        (d) => Number(insert.run(d.deliveryId, d.eventType, d.action, d.orderKey, d.payload, d.bodyDigest, d.receivedAt, d.receivedAt, d.receivedAt).changes) === 1,
      );
    if (this.#db.isTransaction) return insertAll();
    // A group of redeliveries only is rolled back, not committed: the table's AUTOINCREMENT rewrites sqlite_sequence
    // even for an insert that did nothing, and committing that page would cost an fsync'd commit for no new row. The
    // rows that made them duplicates are durable already (committed by an earlier group).
    this.#db.exec('BEGIN IMMEDIATE');
    try {
      const fresh = insertAll();
      this.#db.exec(fresh.includes(true) ? 'COMMIT' : 'ROLLBACK');
      return fresh;
    } catch (error) {
      if (this.#db.isTransaction) this.#db.exec('ROLLBACK');
      throw error;
    }
  }

  /** Puts deliveries left `processing` by a previous process back to pending (at-least-once). Returns how many. */
  recoverInterrupted(now: number): number {
    return Number(
      this.#db
        .prepare("UPDATE linear_webhook_deliveries SET status = 'pending', next_attempt_at = ?, updated_at = ? WHERE status = 'processing'")
        .run(now, now).changes,
    );
  }

  /**
   * Claims the oldest pending delivery that is due and not behind an unfinished earlier delivery of the same order key:
   * marks it processing and counts the attempt. Undefined when nothing can run now.
   */
  claimNext(now: number): StoredDelivery | undefined {
    return this.settleAndClaim([], now, 1)[0];
  }

  /** Marks a claimed delivery finished, with what became of it (handled, or why it was ignored). */
  complete(seq: number, outcome: string, now: number): void {
    this.settleAndClaim([{ seq, kind: 'done', outcome }], now, 0);
  }

  /** Records a failed attempt: back to pending until `retryAt`, or dead when `retryAt` is null. */
  fail(seq: number, error: string, now: number, retryAt: number | null): void {
    this.settleAndClaim([retryAt === null ? { seq, kind: 'dead', error } : { seq, kind: 'retry', error, retryAt }], now, 0);
  }

  /**
   * Records the outcomes of finished attempts, then claims up to `limit` runnable deliveries (oldest first, at most one
   * per order key, none behind an unfinished earlier delivery of its key), all in ONE transaction: one sync for a
   * whole turn of the worker. Returns the claimed deliveries, marked processing with the attempt counted.
   */
  settleAndClaim(outcomes: readonly DeliveryOutcome[], now: number, limit: number): StoredDelivery[] {
    return withoutSync(this.#db, this.#sql('PRAGMA synchronous'), () => this.#settleAndClaim(outcomes, now, limit));
  }

  #settleAndClaim(outcomes: readonly DeliveryOutcome[], now: number, limit: number): StoredDelivery[] {
    return transaction(this.#db, () => {
      for (const o of outcomes) {
        if (o.kind === 'done') {
          this.#sql("UPDATE linear_webhook_deliveries SET status = 'done', outcome = ?, last_error = NULL, updated_at = ? WHERE seq = ?").run(o.outcome, now, o.seq);
        } else if (o.kind === 'dead') {
          this.#sql("UPDATE linear_webhook_deliveries SET status = 'dead', last_error = ?, updated_at = ? WHERE seq = ?").run(o.error, now, o.seq);
        } else {
          this.#sql("UPDATE linear_webhook_deliveries SET status = 'pending', last_error = ?, next_attempt_at = ?, updated_at = ? WHERE seq = ?").run(
            o.error,
            o.retryAt,
            now,
            o.seq,
          );
        }
      }
      if (limit <= 0) return [];
      // One query for the whole batch (at most one per order key, see RUNNABLE), then one update per claimed row.
      const rows = this.#sql(RUNNABLE).all(now, limit) as unknown as Row[];
      const mark = this.#sql("UPDATE linear_webhook_deliveries SET status = 'processing', attempts = attempts + 1, updated_at = ? WHERE seq = ?");
      return rows.map((row) => {
        mark.run(now, row.seq);
        return fromRow({ ...row, status: 'processing', attempts: row.attempts + 1, updated_at: now });
      });
    });
  }

  /** Whether `claimNext(now)` would find something. */
  hasRunnable(now: number): boolean {
    return this.#sql(RUNNABLE).get(now, 1) !== undefined;
  }

  /**
   * The earliest retry time after `now` among pending deliveries; undefined when none waits for a later time. (Pending
   * deliveries due already are either runnable or wait behind an earlier delivery whose end wakes the worker.)
   */
  nextDueAfter(now: number): number | undefined {
    const row = this.#sql("SELECT MIN(next_attempt_at) AS due FROM linear_webhook_deliveries WHERE status = 'pending' AND next_attempt_at > ?").get(now) as {
      due: number | null;
    };
    return row.due ?? undefined;
  }

  /** One delivery by id. */
  get(deliveryId: string): StoredDelivery | undefined {
    const row = this.#sql('SELECT * FROM linear_webhook_deliveries WHERE delivery_id = ?').get(deliveryId) as Row | undefined;
    return row ? fromRow(row) : undefined;
  }

  /** Number of deliveries in each state. */
  counts(): Record<DeliveryStatus, number> {
    const out: Record<DeliveryStatus, number> = { pending: 0, processing: 0, done: 0, dead: 0 };
    const rows = this.#sql('SELECT status, COUNT(*) AS n FROM linear_webhook_deliveries GROUP BY status').all() as { status: DeliveryStatus; n: number }[];
    for (const row of rows) out[row.status] = row.n;
    return out;
  }

  /** Dead-lettered deliveries, newest first. */
  deadLetters(limit = 50): StoredDelivery[] {
    return (
      this.#sql("SELECT * FROM linear_webhook_deliveries WHERE status = 'dead' ORDER BY seq DESC LIMIT ?").all(limit) as unknown as Row[]
    ).map(fromRow);
  }

  /** Puts a dead delivery back in the queue with a fresh attempt count; false when it is not dead. */
  retryDead(deliveryId: string, now: number): boolean {
    const result = this.#db
      .prepare(
        "UPDATE linear_webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = ?, updated_at = ? WHERE delivery_id = ? AND status = 'dead'",
      )
      .run(now, now, deliveryId);
    return Number(result.changes) === 1;
  }

  /** Deletes finished (done or dead) deliveries last touched before `before`; returns how many. */
  prune(before: number): number {
    return Number(
      this.#sql("DELETE FROM linear_webhook_deliveries WHERE status IN ('done', 'dead') AND updated_at < ?").run(before).changes,
    );
  }
}
