// The durable work queue of the Linear router: work the router took over from a webhook (answer a mention, triage an
// issue, run a planner turn) is written here before the webhook is acknowledged, and run from here, at least once,
// in order per serial key (one planning session's turns never overlap), resumed after a restart.
import type { Kysely, Selectable } from 'kysely';
import { sql } from 'kysely';
import type { Database } from './tables/index.ts';

export const JOB_STATUSES = ['queued', 'running', 'done', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** One unit of work. `payload` is the kind's own JSON. */
export interface LinearJob {
  seq: number;
  /** Unique: enqueueing the same key again is a no-op (idempotency across redeliveries). */
  key: string;
  kind: string;
  /** Jobs with the same serial key run one at a time, in seq order. */
  serialKey: string;
  /** The Linear agent session the work reports to, if any (a stop signal cancels it). */
  agentSessionId: string | null;
  payload: unknown;
  status: JobStatus;
  attempts: number;
  nextAt: number;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
}

/** What `enqueue` takes: a job's key, kind, serial key and payload, and when it may run. */
export interface NewJob {
  key: string;
  kind: string;
  serialKey: string;
  agentSessionId?: string | null;
  payload: unknown;
  /** Not before this time (default: now). */
  runAt?: number;
}

type JobRow = Selectable<Database['linear_jobs']>;

/** Status literals are inlined (not bound), as in the partial-index queries of the other queues. */
const QUEUED = sql.lit('queued' as const);
const RUNNING = sql.lit('running' as const);

function toJob(row: JobRow): LinearJob {
  return {
    seq: row.seq,
    key: row.key,
    kind: row.kind,
    serialKey: row.serial_key,
    agentSessionId: row.agent_session_id,
    payload: JSON.parse(row.payload) as unknown,
    status: row.status,
    attempts: row.attempts,
    nextAt: row.next_at,
    lastError: row.last_error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The job table (migration 460). Every method resolves after its statement or transaction committed. */
export class LinearJobStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Queues a job unless one with its key exists; resolves the job and whether it is new. */
  async enqueue(job: NewJob, now: number): Promise<{ job: LinearJob; created: boolean }> {
    const result = await this.#db
      .insertInto('linear_jobs')
      .values({
        key: job.key,
        kind: job.kind,
        serial_key: job.serialKey,
        agent_session_id: job.agentSessionId ?? null,
        payload: JSON.stringify(job.payload),
        status: 'queued',
        attempts: 0,
        next_at: job.runAt ?? now,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) => oc.column('key').doNothing())
      .executeTakeFirst();
    return { job: (await this.get(job.key)) as LinearJob, created: Number(result.numInsertedOrUpdatedRows ?? 0n) > 0 };
  }

  /** One job by key, or null. */
  async get(key: string): Promise<LinearJob | null> {
    const row = await this.#db.selectFrom('linear_jobs').selectAll().where('key', '=', key).executeTakeFirst();
    return row ? toJob(row) : null;
  }

  /** Jobs, oldest first, optionally by status. */
  async list(statuses?: readonly JobStatus[]): Promise<LinearJob[]> {
    let query = this.#db.selectFrom('linear_jobs').selectAll().orderBy('seq');
    if (statuses) {
      if (statuses.length === 0) return [];
      query = query.where('status', 'in', statuses);
    }
    return (await query.execute()).map(toJob);
  }

  /**
   * Claims up to `limit` due jobs (status → running, attempts + 1), in seq order, at most one per serial key and
   * only the first queued job of a serial key that has nothing running. One transaction.
   */
  async claimDue(now: number, limit: number): Promise<LinearJob[]> {
    if (limit <= 0) return [];
    return this.#db.transaction().execute(async (trx) => {
      const rows = await trx
        .selectFrom('linear_jobs as j')
        .selectAll('j')
        .where('j.status', '=', QUEUED)
        .where('j.next_at', '<=', now)
        .where((eb) =>
          eb.and([
            eb.not(
              eb.exists(
                eb
                  .selectFrom('linear_jobs as r')
                  .select('r.seq')
                  .whereRef('r.serial_key', '=', 'j.serial_key')
                  .where('r.status', '=', RUNNING),
              ),
            ),
            eb.not(
              eb.exists(
                eb
                  .selectFrom('linear_jobs as e')
                  .select('e.seq')
                  .whereRef('e.serial_key', '=', 'j.serial_key')
                  .where('e.status', '=', QUEUED)
                  .whereRef('e.seq', '<', 'j.seq'),
              ),
            ),
          ]),
        )
        .orderBy('j.seq')
        .limit(limit)
        .execute();
      if (rows.length === 0) return [];
      await trx
        .updateTable('linear_jobs')
        .set((eb) => ({ status: 'running', attempts: eb('attempts', '+', 1), updated_at: now }))
        .where(
          'seq',
          'in',
          rows.map((row) => row.seq),
        )
        .where('status', '=', QUEUED)
        .execute();
      return rows.map((row) => ({
        ...toJob(row),
        status: 'running' as const,
        attempts: row.attempts + 1,
        updatedAt: now,
      }));
    });
  }

  /** Ends a running job; resolves false when it was not running (cancelled meanwhile). */
  async finish(
    seq: number,
    status: 'done' | 'failed' | 'cancelled',
    error: string | null,
    now: number,
  ): Promise<boolean> {
    const result = await this.#db
      .updateTable('linear_jobs')
      .set({ status, last_error: error, updated_at: now })
      .where('seq', '=', seq)
      .where('status', '=', RUNNING)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Puts a running job back in the queue to run again at `nextAt`. */
  async retry(seq: number, error: string, nextAt: number, now: number): Promise<boolean> {
    const result = await this.#db
      .updateTable('linear_jobs')
      .set({ status: 'queued', last_error: error, next_at: nextAt, updated_at: now })
      .where('seq', '=', seq)
      .where('status', '=', RUNNING)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** After a restart: jobs left running by the last process are queued again (their attempt stays counted). */
  async recoverInterrupted(now: number): Promise<number> {
    const result = await this.#db
      .updateTable('linear_jobs')
      .set({ status: 'queued', next_at: now, updated_at: now })
      .where('status', '=', RUNNING)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /** Cancels the queued and running jobs of an agent session; resolves the jobs cancelled. */
  async cancelForSession(agentSessionId: string, now: number): Promise<LinearJob[]> {
    return this.#db.transaction().execute(async (trx) => {
      const rows = await trx
        .selectFrom('linear_jobs')
        .selectAll()
        .where('agent_session_id', '=', agentSessionId)
        .where('status', 'in', [QUEUED, RUNNING])
        .orderBy('seq')
        .execute();
      await trx
        .updateTable('linear_jobs')
        .set({ status: 'cancelled', last_error: 'stopped from Linear', updated_at: now })
        .where('agent_session_id', '=', agentSessionId)
        .where('status', 'in', [QUEUED, RUNNING])
        .execute();
      return rows.map(toJob);
    });
  }

  /** True when a job of `kind` with `serialKey` is queued or running. */
  async hasOpen(serialKey: string, kind: string): Promise<boolean> {
    const row = await this.#db
      .selectFrom('linear_jobs')
      .select('seq')
      .where('serial_key', '=', serialKey)
      .where('kind', '=', kind)
      .where('status', 'in', [QUEUED, RUNNING])
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** The earliest `next_at` of a queued job after `now`, if any. */
  async nextDueAfter(now: number): Promise<number | undefined> {
    const row = await this.#db
      .selectFrom('linear_jobs')
      .select((eb) => eb.fn.min('next_at').as('due'))
      .where('status', '=', QUEUED)
      .where('next_at', '>', now)
      .executeTakeFirst();
    return row?.due ?? undefined;
  }

  /** True when a queued job is due now. */
  async hasDue(now: number): Promise<boolean> {
    const row = await this.#db
      .selectFrom('linear_jobs')
      .select('seq')
      .where('status', '=', QUEUED)
      .where('next_at', '<=', now)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Deletes finished jobs last updated before `before`. */
  async prune(before: number): Promise<number> {
    const result = await this.#db
      .deleteFrom('linear_jobs')
      .where('status', 'in', ['done', 'failed', 'cancelled'])
      .where('updated_at', '<', before)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
