// The webhook worker's queue of Linear deliveries: the claim query (`runnableQuery`), a turn's settle-and-claim in one
// transaction of relaxed durability (`bookkeeping`), with the finished attempts grouped by the change they make, the
// single-step claim, completion and failure, the recovery of interrupted deliveries, and the next retry time.
import type { Kysely, Transaction, Updateable } from 'kysely';
import { sql, SqliteAdapter } from 'kysely';
import type { SlotOf } from './hot-statements.ts';
import { HotStatements } from './hot-statements.ts';
import type { DeliveryRow } from './linear-delivery-rows.ts';
import { PENDING, PROCESSING, toDelivery } from './linear-delivery-rows.ts';
import type { DeliveryOutcome, StoredDelivery } from './linear-delivery-types.ts';
import type { Database } from './tables/index.ts';

/**
 * The oldest `limit` due pending deliveries not behind an unfinished earlier delivery of the same order key (so at most
 * one per key). On SQLite it walks the partial index of pending deliveries in seq order (no sort, it stops after
 * `limit` rows) and looks behind each through the partial index of open deliveries: both need the status literals.
 */
export function runnableQuery(db: Kysely<Database>, now: number, limit: number) {
  return db
    .selectFrom('linear_webhook_deliveries as q')
    .selectAll('q')
    .where('q.status', '=', PENDING)
    .where('q.next_attempt_at', '<=', now)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('linear_webhook_deliveries as p')
            .select(sql.lit(1).as('one'))
            .whereRef('p.order_key', '=', 'q.order_key')
            .whereRef('p.seq', '<', 'q.seq')
            .where('p.status', 'in', [PENDING, PROCESSING]),
        ),
      ),
    )
    .orderBy('q.seq')
    .limit(limit);
}

/**
 * Runs `fn`, a transaction of the worker's own bookkeeping, with relaxed commit durability.
 *
 * SQLite: synchronous=NORMAL. In WAL mode its commit survives a crash of the process (the WAL is written before COMMIT
 * returns) and becomes durable against power loss with the next synchronous=FULL commit — the intake's next delivery.
 * A power cut may only undo a claim or a result, which runs that delivery again (at least once; its effects are
 * idempotent). The setting is changed and restored while this call holds the connection (Kysely's lock over the one
 * SQLite connection), so the intake's commits, which a 200 waits for, always run with the connection's own (FULL).
 *
 * PostgreSQL: `SET LOCAL synchronous_commit = off` for this transaction only: the commit may be lost if the server
 * crashes before its WAL writer flushes (the same at-least-once rerun); the intake's transactions stay synchronous.
 */
async function bookkeeping<T>(db: Kysely<Database>, fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) {
    return db.transaction().execute(async (trx) => {
      await sql`SET LOCAL synchronous_commit = off`.execute(trx);
      return fn(trx);
    });
  }
  return db.connection().execute(async (conn) => {
    const { rows } = await sql<{ synchronous: number }>`PRAGMA synchronous`.execute(conn);
    const previous = Number(rows[0]?.synchronous ?? 2);
    await sql`PRAGMA synchronous = NORMAL`.execute(conn);
    try {
      return await conn.transaction().execute(fn);
    } finally {
      await sql.raw(`PRAGMA synchronous = ${previous}`).execute(conn);
    }
  });
}

/** Finished attempts that make the same change: one UPDATE for all their deliveries. */
interface OutcomeGroup {
  kind: DeliveryOutcome['kind'];
  /** The changed values other than the update time: the outcome (done), or the error and, for a retry, its time. */
  values: unknown[];
  seqs: number[];
}

/** `outcomes` grouped by the change they make, in first-seen order. */
function groupOutcomes(outcomes: readonly DeliveryOutcome[]): OutcomeGroup[] {
  const groups = new Map<string, OutcomeGroup>();
  for (const o of outcomes) {
    const values = o.kind === 'done' ? [o.outcome] : o.kind === 'dead' ? [o.error] : [o.error, o.retryAt];
    const key = JSON.stringify([o.kind, ...values]);
    const group = groups.get(key);
    if (group) group.seqs.push(o.seq);
    else groups.set(key, { kind: o.kind, values, seqs: [o.seq] });
  }
  return [...groups.values()];
}

/** The UPDATE recording a group of `count` outcomes of `kind`: slots are its values, the update time, then the seqs. */
function outcomeUpdate(db: Kysely<Database>, kind: DeliveryOutcome['kind'], count: number, slot: SlotOf) {
  const first = kind === 'retry' ? 3 : 2;
  const now = slot<number>(first - 1);
  const patch: Updateable<Database['linear_webhook_deliveries']> =
    kind === 'done'
      ? { status: 'done', outcome: slot<string>(0), last_error: null, updated_at: now }
      : kind === 'dead'
        ? { status: 'dead', last_error: slot<string>(0), updated_at: now }
        : { status: 'pending', last_error: slot<string>(0), next_attempt_at: slot<number>(1), updated_at: now };
  const seqs = Array.from({ length: count }, (_, i) => slot<number>(first + i));
  return db.updateTable('linear_webhook_deliveries').set(patch).where('seq', 'in', seqs);
}

/** The UPDATE claiming `count` deliveries: processing, one more attempt. Slots: the time, then the seqs. */
function claimUpdate(db: Kysely<Database>, count: number, slot: SlotOf) {
  return db
    .updateTable('linear_webhook_deliveries')
    .set((eb) => ({ status: 'processing', attempts: eb('attempts', '+', 1), updated_at: slot<number>(0) }))
    .where(
      'seq',
      'in',
      Array.from({ length: count }, (_, i) => slot<number>(i + 1)),
    );
}

/** The worker's side of the deliveries: claims, results and retry times. Every method resolves after its commit. */
export class DeliveryQueue {
  readonly #db: Kysely<Database>;
  /** The worker's statements (claim and results, per delivery), compiled once each. */
  readonly #hot = new HotStatements();

  /** The queue over `db`. */
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Puts deliveries left `processing` by a previous process back to pending (at-least-once). Resolves how many. */
  async recoverInterrupted(now: number): Promise<number> {
    const result = await this.#db
      .updateTable('linear_webhook_deliveries')
      .set({ status: 'pending', next_attempt_at: now, updated_at: now })
      .where('status', '=', PROCESSING)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /**
   * Claims the oldest pending delivery that is due and not behind an unfinished earlier delivery of the same order key:
   * marks it processing and counts the attempt. Undefined when nothing can run now.
   */
  async claimNext(now: number): Promise<StoredDelivery | undefined> {
    return (await this.settleAndClaim([], now, 1))[0];
  }

  /** Marks a claimed delivery finished, with what became of it (handled, or why it was ignored). */
  async complete(seq: number, outcome: string, now: number): Promise<void> {
    await this.settleAndClaim([{ seq, kind: 'done', outcome }], now, 0);
  }

  /** Records a failed attempt: back to pending until `retryAt`, or dead when `retryAt` is null. */
  async fail(seq: number, error: string, now: number, retryAt: number | null): Promise<void> {
    await this.settleAndClaim(
      [retryAt === null ? { seq, kind: 'dead', error } : { seq, kind: 'retry', error, retryAt }],
      now,
      0,
    );
  }

  /**
   * Records the outcomes of finished attempts, then claims up to `limit` runnable deliveries (oldest first, at most one
   * per order key, none behind an unfinished earlier delivery of its key), all in ONE transaction: one sync for a
   * whole turn of the worker (a relaxed one: see `bookkeeping`). Resolves the claimed deliveries, marked processing
   * with the attempt counted.
   */
  async settleAndClaim(outcomes: readonly DeliveryOutcome[], now: number, limit: number): Promise<StoredDelivery[]> {
    return bookkeeping(this.#db, async (trx) => {
      // Outcomes that set the same values share one UPDATE (most of a turn's are "handled: <type>").
      for (const { kind, values, seqs } of groupOutcomes(outcomes)) {
        await this.#hot.rows(trx, `${kind}:${seqs.length}`, [...values, now, ...seqs], (slot) =>
          outcomeUpdate(trx, kind, seqs.length, slot),
        );
      }
      if (limit <= 0) return [];
      // One query for the whole batch (at most one per order key, see runnableQuery), then one update for the claimed.
      const rows = await this.#runnable(trx, now, limit);
      if (rows.length === 0) return [];
      await this.#hot.rows(trx, `claim:${rows.length}`, [now, ...rows.map((row) => row.seq)], (slot) =>
        claimUpdate(trx, rows.length, slot),
      );
      return rows.map((row) =>
        toDelivery({ ...row, status: 'processing', attempts: row.attempts + 1, updated_at: now }),
      );
    });
  }

  /** Whether `claimNext(now)` would find something. */
  async hasRunnable(now: number): Promise<boolean> {
    return (await this.#runnable(this.#db, now, 1)).length > 0;
  }

  /** The runnable deliveries (see `runnableQuery`), through the statement compiled once. */
  #runnable(db: Kysely<Database>, now: number, limit: number): Promise<DeliveryRow[]> {
    return this.#hot.rows(db, 'runnable', [now, limit], (slot) => runnableQuery(db, slot<number>(0), slot<number>(1)));
  }

  /**
   * The earliest retry time after `now` among pending deliveries; undefined when none waits for a later time. (Pending
   * deliveries due already are either runnable or wait behind an earlier delivery whose end wakes the worker.)
   */
  async nextDueAfter(now: number): Promise<number | undefined> {
    const row = await this.#db
      .selectFrom('linear_webhook_deliveries')
      .select((eb) => eb.fn.min('next_attempt_at').as('due'))
      .where('status', '=', PENDING)
      .where('next_attempt_at', '>', now)
      .executeTakeFirst();
    return row?.due ?? undefined;
  }
}
