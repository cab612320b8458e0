// The `engine_calls` table: a call of the engine made on a node that does not serve it (PostgreSQL). The caller enqueues
// it (NOTIFY ENGINE_CALLS_CHANNEL in the same transaction); the engine's holder claims pending calls with `FOR UPDATE
// SKIP LOCKED`, runs them, and writes each outcome (NOTIFY ENGINE_RESULTS_CHANNEL with the call's id). A call left
// running by a holder that died is made pending again by the next holder (the engine's calls dedupe by message id).
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Database } from './tables/index.ts';

/** NOTIFY channel of new calls (empty payload) and of finished ones (the call's id). */
export const ENGINE_CALLS_CHANNEL = 'switchboard_engine_calls';
export const ENGINE_RESULTS_CHANNEL = 'switchboard_engine_results';

/** A call as its holder runs it. */
export interface EngineCall {
  id: number;
  method: string;
  args: unknown[];
}

/** How a call ended. */
export type EngineCallOutcome =
  | { status: 'pending' | 'running' }
  | { status: 'done'; result: unknown }
  | { status: 'failed'; error: { kind: string; message: string; field?: string } };

/** Reads and writes `engine_calls`. */
export class EngineCallStore {
  readonly #db: Kysely<Database>;
  readonly #notify: boolean;

  /** `notify`: send the NOTIFYs (PostgreSQL only). */
  constructor(db: Kysely<Database>, options: { notify: boolean }) {
    this.#db = db;
    this.#notify = options.notify;
  }

  /** Stores a pending call; resolves to its id once committed. */
  async enqueue(method: string, args: readonly unknown[], now: number): Promise<number> {
    return this.#db.transaction().execute(async (trx) => {
      const row = await trx
        .insertInto('engine_calls')
        .values({ method, args: JSON.stringify(args), status: 'pending', created_at: now })
        .returning('id')
        .executeTakeFirstOrThrow();
      if (this.#notify) await sql`SELECT pg_notify(${ENGINE_CALLS_CHANNEL}, '')`.execute(trx);
      return Number(row.id);
    });
  }

  /** The state of a call (null when there is no such call). */
  async outcome(id: number): Promise<EngineCallOutcome | null> {
    const row = await this.#db
      .selectFrom('engine_calls')
      .select(['status', 'result', 'error'])
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) return null;
    switch (row.status) {
      case 'pending':
      case 'running':
        return { status: row.status };
      case 'done':
        return { status: 'done', result: row.result === null ? undefined : (JSON.parse(row.result) as unknown) };
      case 'failed':
        return { status: 'failed', error: JSON.parse(row.error ?? '{}') as { kind: string; message: string } };
      default:
        row.status satisfies never;
        return null;
    }
  }

  /** Claims the oldest pending call for `holder` (marks it running); null when none is pending. */
  async claim(holder: string): Promise<EngineCall | null> {
    return this.#db.transaction().execute(async (trx) => {
      let query = trx
        .selectFrom('engine_calls')
        .select(['id', 'method', 'args'])
        .where('status', '=', 'pending')
        .orderBy('id')
        .limit(1);
      if (this.#notify) query = query.forUpdate().skipLocked();
      const row = await query.executeTakeFirst();
      if (!row) return null;
      await trx
        .updateTable('engine_calls')
        .set({ status: 'running', claimed_by: holder })
        .where('id', '=', row.id)
        .execute();
      return { id: Number(row.id), method: row.method, args: JSON.parse(row.args) as unknown[] };
    });
  }

  /** Writes a call's outcome (and notifies its caller). */
  async finish(
    id: number,
    outcome: Extract<EngineCallOutcome, { status: 'done' | 'failed' }>,
    now: number,
  ): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await trx
        .updateTable('engine_calls')
        .set(
          outcome.status === 'done'
            ? { status: 'done', result: outcome.result === undefined ? null : JSON.stringify(outcome.result) }
            : { status: 'failed', error: JSON.stringify(outcome.error) },
        )
        .set({ done_at: now })
        .where('id', '=', id)
        .execute();
      if (this.#notify) await sql`SELECT pg_notify(${ENGINE_RESULTS_CHANNEL}, ${String(id)})`.execute(trx);
    });
  }

  /** Makes pending again the calls left running by holders other than `holder` (a new holder's recovery). */
  async reclaim(holder: string): Promise<number> {
    const result = await this.#db
      .updateTable('engine_calls')
      .set({ status: 'pending', claimed_by: null })
      .where('status', '=', 'running')
      .where((eb) => eb.or([eb('claimed_by', 'is', null), eb('claimed_by', '!=', holder)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /** Deletes finished calls older than `before`. */
  async prune(before: number): Promise<void> {
    await this.#db
      .deleteFrom('engine_calls')
      .where('status', 'in', ['done', 'failed'])
      .where('done_at', '<', before)
      .execute();
  }
}
