import type { Kysely, Selectable } from 'kysely';
import type { PostedOutcome } from './run-rows.ts';
import { countRunAttempt, markRunEnded, markRunPosted } from './run-rows.ts';
import type { Database } from './tables/index.ts';

/** A stored cron task. Times are epoch milliseconds. */
export interface CronTask {
  id: string;
  name: string;
  /** Cron expression (5 fields or a nickname such as @daily). */
  schedule: string;
  /** IANA time zone the expression is read in; null: the scheduler's default. */
  timezone: string | null;
  prompt: string;
  enabled: boolean;
  createdAt: number;
  updatedAt: number;
  /** Clock time the last run was posted to the engine. */
  lastRunAt: number | null;
  /** Due time of the last run fired, skipped or abandoned: no due time at or before it fires again. */
  lastDueAt: number | null;
  /** Next due time; null when disabled or when the expression never fires again. */
  nextRunAt: number | null;
}

/** How a run row came to be. */
export type CronRunKind = 'scheduled' | 'catch-up' | 'missed';

/**
 * `posting`: written before the post (found at start = the daemon died before recording it); `posted`: accepted by
 * the engine; `skipped`: missed while the daemon was down (policy skip); `failed`: the engine refused it;
 * `abandoned`: a post that was cut off by a crash twice (not tried again, to avoid a restart loop).
 */
export type CronRunStatus = 'posting' | 'posted' | 'skipped' | 'failed' | 'abandoned';

/** One run (or one record of missed runs) of a cron task. */
export interface CronRun {
  id: number;
  taskId: string;
  dueAt: number;
  kind: CronRunKind;
  status: CronRunStatus;
  /** Due times missed while the daemon was down that this row stands for (0 for an ordinary run). */
  missed: number;
  firstMissedAt: number | null;
  prompt: string;
  /** Idempotency id given to the engine; the same on a re-post after a crash. */
  messageId: string;
  attempts: number;
  sessionId: string | null;
  duplicate: boolean;
  error: string | null;
  createdAt: number;
  finishedAt: number | null;
}

function taskFromRow(r: Selectable<Database['cron_tasks']>): CronTask {
  return {
    id: r.id,
    name: r.name,
    schedule: r.schedule,
    timezone: r.timezone,
    prompt: r.prompt,
    enabled: r.enabled === 1,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    lastRunAt: r.last_run_at,
    lastDueAt: r.last_due_at,
    nextRunAt: r.next_run_at,
  };
}

function runFromRow(r: Selectable<Database['cron_runs']>): CronRun {
  return {
    id: r.id,
    taskId: r.task_id,
    dueAt: r.due_at,
    kind: r.kind,
    status: r.status,
    missed: r.missed,
    firstMissedAt: r.first_missed_at,
    prompt: r.prompt,
    messageId: r.message_id,
    attempts: r.attempts,
    sessionId: r.session_id,
    duplicate: r.duplicate === 1,
    error: r.error,
    createdAt: r.created_at,
    finishedAt: r.finished_at,
  };
}

/** Persistence of cron tasks and their runs. Every method is one statement or one transaction, resolved once committed. */
export class CronTaskStore {
  #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Inserts a new task. Throws on a duplicate id or name (the caller checks names first for a clear error). */
  async insert(task: CronTask): Promise<void> {
    await this.#db
      .insertInto('cron_tasks')
      .values({
        id: task.id,
        name: task.name,
        schedule: task.schedule,
        timezone: task.timezone,
        prompt: task.prompt,
        enabled: task.enabled ? 1 : 0,
        created_at: task.createdAt,
        updated_at: task.updatedAt,
        last_run_at: task.lastRunAt,
        last_due_at: task.lastDueAt,
        next_run_at: task.nextRunAt,
      })
      .execute();
  }

  /** The task with this id, or else this name; undefined when there is none. */
  async resolve(ref: string): Promise<CronTask | undefined> {
    const rows = await this.#db
      .selectFrom('cron_tasks')
      .selectAll()
      .where((eb) => eb.or([eb('id', '=', ref), eb('name', '=', ref)]))
      .execute();
    const row = rows.find((r) => r.id === ref) ?? rows[0];
    return row ? taskFromRow(row) : undefined;
  }

  /** Every task, oldest first (tasks made in the same millisecond by id). */
  async list(): Promise<CronTask[]> {
    const rows = await this.#db.selectFrom('cron_tasks').selectAll().orderBy('created_at').orderBy('id').execute();
    return rows.map(taskFromRow);
  }

  /** Turns a task on (with its next due time) or off (next due time cleared). */
  async setEnabled(id: string, enabled: boolean, nextRunAt: number | null, now: number): Promise<void> {
    await this.#db
      .updateTable('cron_tasks')
      .set({ enabled: enabled ? 1 : 0, next_run_at: nextRunAt, updated_at: now })
      .where('id', '=', id)
      .execute();
  }

  /** Sets the next due time of a task. */
  async setNextRun(id: string, nextRunAt: number | null): Promise<void> {
    await this.#db.updateTable('cron_tasks').set({ next_run_at: nextRunAt }).where('id', '=', id).execute();
  }

  /** Deletes a task and its runs; resolves to false when there was none. */
  async delete(id: string): Promise<boolean> {
    const result = await this.#db.deleteFrom('cron_tasks').where('id', '=', id).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /**
   * Writes the intent to post run `dueAt` of a task (status `posting`, attempts 1) and moves the task on (last due
   * time, next due time), in one transaction. Resolves to the run, or to null when a row for this due time already
   * exists or the task has already passed it (it was fired, skipped or abandoned before: never fire it twice).
   */
  async beginRun(input: {
    taskId: string;
    dueAt: number;
    kind: 'scheduled' | 'catch-up';
    missed: number;
    firstMissedAt: number | null;
    prompt: string;
    messageId: string;
    now: number;
    nextRunAt: number | null;
  }): Promise<CronRun | null> {
    return this.#db.transaction().execute(async (trx) => {
      const task = await trx
        .selectFrom('cron_tasks')
        .select('last_due_at')
        .where('id', '=', input.taskId)
        .executeTakeFirst();
      if (!task || (task.last_due_at !== null && task.last_due_at >= input.dueAt)) return null;
      const row = await trx
        .insertInto('cron_runs')
        .values({
          task_id: input.taskId,
          due_at: input.dueAt,
          kind: input.kind,
          status: 'posting',
          missed: input.missed,
          first_missed_at: input.firstMissedAt,
          prompt: input.prompt,
          message_id: input.messageId,
          attempts: 1,
          created_at: input.now,
        })
        .onConflict((oc) => oc.doNothing())
        .returningAll()
        .executeTakeFirst();
      if (!row) return null;
      await advance(trx, input.taskId, input.dueAt, input.nextRunAt);
      return runFromRow(row);
    });
  }

  /** Counts one more attempt at posting a run found unfinished after a restart. */
  async retryRun(runId: number): Promise<void> {
    await countRunAttempt(this.#db, 'cron_runs', runId);
  }

  /** Records a run as accepted by the engine (its session, whether it was a duplicate) and trims the task's history. */
  async finishRun(run: CronRun, outcome: PostedOutcome, keepRuns: number): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await markRunPosted(trx, 'cron_runs', run.id, outcome);
      await trx.updateTable('cron_tasks').set({ last_run_at: outcome.now }).where('id', '=', run.taskId).execute();
      await trim(trx, run.taskId, keepRuns);
    });
  }

  /** Records a run the engine refused (`failed`) or a crashed post not tried again (`abandoned`). */
  async failRun(
    run: CronRun,
    status: 'failed' | 'abandoned',
    error: string,
    now: number,
    keepRuns: number,
  ): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await markRunEnded(trx, 'cron_runs', run.id, status, error, now);
      await trim(trx, run.taskId, keepRuns);
    });
  }

  /** Records runs missed while the daemon was down and skipped by policy (one row for all of them); the task moves on. */
  async recordMissed(
    input: {
      taskId: string;
      firstDueAt: number;
      lastDueAt: number;
      count: number;
      messageId: string;
      now: number;
      nextRunAt: number | null;
    },
    keepRuns: number,
  ): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await trx
        .insertInto('cron_runs')
        .values({
          task_id: input.taskId,
          due_at: input.lastDueAt,
          kind: 'missed',
          status: 'skipped',
          missed: input.count,
          first_missed_at: input.firstDueAt,
          prompt: '',
          message_id: input.messageId,
          attempts: 0,
          created_at: input.now,
          finished_at: input.now,
        })
        .onConflict((oc) => oc.doNothing())
        .execute();
      await advance(trx, input.taskId, input.lastDueAt, input.nextRunAt);
      await trim(trx, input.taskId, keepRuns);
    });
  }

  /** One run by id. */
  async run(id: number): Promise<CronRun | undefined> {
    const row = await this.#db.selectFrom('cron_runs').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? runFromRow(row) : undefined;
  }

  /** Runs whose post was started and never recorded (a crash in between), oldest first. */
  async unfinishedRuns(): Promise<CronRun[]> {
    const rows = await this.#db
      .selectFrom('cron_runs')
      .selectAll()
      .where('status', '=', 'posting')
      .orderBy('due_at')
      .orderBy('id')
      .execute();
    return rows.map(runFromRow);
  }

  /** The newest runs of a task (newest first). */
  async runs(taskId: string, limit = 20): Promise<CronRun[]> {
    const rows = await this.#db
      .selectFrom('cron_runs')
      .selectAll()
      .where('task_id', '=', taskId)
      .orderBy('due_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map(runFromRow);
  }
}

/** Moves a task past `dueAt` (its last due time never goes back) and sets its next due time. */
async function advance(db: Kysely<Database>, taskId: string, dueAt: number, nextRunAt: number | null): Promise<void> {
  await db
    .updateTable('cron_tasks')
    .set((eb) => ({
      last_due_at: eb
        .case()
        .when(eb.or([eb('last_due_at', 'is', null), eb('last_due_at', '<', dueAt)]))
        .then(dueAt)
        .else(eb.ref('last_due_at'))
        .end(),
      next_run_at: nextRunAt,
    }))
    .where('id', '=', taskId)
    .execute();
}

/** Deletes a task's finished runs beyond its newest `keep`. */
async function trim(db: Kysely<Database>, taskId: string, keep: number): Promise<void> {
  await db
    .deleteFrom('cron_runs')
    .where('task_id', '=', taskId)
    .where('status', '!=', 'posting')
    .where('id', 'not in', (eb) =>
      eb
        .selectFrom('cron_runs')
        .select('id')
        .where('task_id', '=', taskId)
        .orderBy('due_at', 'desc')
        .orderBy('id', 'desc')
        .limit(keep),
    )
    .execute();
}
