import type { Kysely, Selectable, Transaction } from 'kysely';
import type { PostedOutcome } from './run-rows.ts';
import { countRunAttempt, markRunEnded, markRunPosted } from './run-rows.ts';
import type { Database } from './tables/index.ts';

/** One recurring heartbeat task: a title and what to check. */
export interface HeartbeatTask {
  id: string;
  title: string;
  prompt: string;
  createdAt: number;
  updatedAt: number;
}

/** Text queued for the next heartbeat run (`POST /hooks/wake` with `next-heartbeat`, …). */
export interface HeartbeatEvent {
  id: number;
  text: string;
  /** Who queued it (`hook`, `wake`, …). */
  source: string;
  createdAt: number;
  /** The run whose prompt carries it; null while it waits. */
  runId: number | null;
}

/** The heartbeat's cadence: runs are due `interval` after `anchorAt` (the last run, empty tick or first start). */
export interface HeartbeatState {
  anchorAt: number;
  lastRunAt: number | null;
  lastReason: string | null;
}

/** `posting` until the engine accepted it (found at start = cut off by a crash); see CronRunStatus for the rest. */
export type HeartbeatRunStatus = 'posting' | 'posted' | 'failed' | 'abandoned';

/** One heartbeat run: its prompt as posted and what became of it. */
export interface HeartbeatRun {
  id: number;
  messageId: string;
  reason: string;
  prompt: string;
  status: HeartbeatRunStatus;
  attempts: number;
  tasks: number;
  events: number;
  sessionId: string | null;
  duplicate: boolean;
  error: string | null;
  createdAt: number;
  finishedAt: number | null;
}

/** The id of the one heartbeat_state row. */
const STATE_ID = 1;

function taskFromRow(r: Selectable<Database['heartbeat_tasks']>): HeartbeatTask {
  return { id: r.id, title: r.title, prompt: r.prompt, createdAt: r.created_at, updatedAt: r.updated_at };
}

function eventFromRow(r: Selectable<Database['heartbeat_events']>): HeartbeatEvent {
  return { id: r.id, text: r.text, source: r.source, createdAt: r.created_at, runId: r.run_id };
}

function stateFromRow(r: Selectable<Database['heartbeat_state']>): HeartbeatState {
  return { anchorAt: r.anchor_at, lastRunAt: r.last_run_at, lastReason: r.last_reason };
}

function runFromRow(r: Selectable<Database['heartbeat_runs']>): HeartbeatRun {
  return {
    id: r.id,
    messageId: r.message_id,
    reason: r.reason,
    prompt: r.prompt,
    status: r.status,
    attempts: r.attempts,
    tasks: r.tasks,
    events: r.events,
    sessionId: r.session_id,
    duplicate: r.duplicate === 1,
    error: r.error,
    createdAt: r.created_at,
    finishedAt: r.finished_at,
  };
}

/**
 * Persistence of the heartbeat: tasks, cadence, queued events and runs. Every method resolves once its statement or
 * transaction committed (or, given a caller's transaction, once it ran in it).
 */
export class HeartbeatStore {
  #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Stores a new task; rejects on a taken id or title. */
  async insertTask(task: HeartbeatTask): Promise<void> {
    await this.#db
      .insertInto('heartbeat_tasks')
      .values({
        id: task.id,
        title: task.title,
        prompt: task.prompt,
        created_at: task.createdAt,
        updated_at: task.updatedAt,
      })
      .execute();
  }

  /** The task with this id, or else this title. */
  async resolveTask(ref: string): Promise<HeartbeatTask | undefined> {
    const rows = await this.#db
      .selectFrom('heartbeat_tasks')
      .selectAll()
      .where((eb) => eb.or([eb('id', '=', ref), eb('title', '=', ref)]))
      .execute();
    const row = rows.find((r) => r.id === ref) ?? rows[0];
    return row ? taskFromRow(row) : undefined;
  }

  /** Every task, oldest first (the order of the batch prompt; tasks made in the same millisecond by id). */
  async listTasks(): Promise<HeartbeatTask[]> {
    return listTasks(this.#db);
  }

  /** Deletes a task; resolves false when there was none. */
  async deleteTask(id: string): Promise<boolean> {
    const result = await this.#db.deleteFrom('heartbeat_tasks').where('id', '=', id).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /** The cadence state; made with `anchorAt = now` the first time it is missing (a read writes nothing after that). */
  async state(now: number): Promise<HeartbeatState> {
    return state(this.#db, now);
  }

  /** A timer tick with nothing to send: the cadence moves on without a run. */
  async setAnchor(at: number): Promise<void> {
    await this.#db.updateTable('heartbeat_state').set({ anchor_at: at }).where('id', '=', STATE_ID).execute();
  }

  /**
   * Queues text for the next run; resolves to the event and the cadence it waits on, read in the same transaction.
   * Given `trx`, both run in the caller's transaction (so what the caller writes there commits with the event, e.g. an
   * idempotency key's answer); else in one of their own.
   */
  async addEvent(
    text: string,
    source: string,
    now: number,
    trx?: Transaction<Database>,
  ): Promise<{ event: HeartbeatEvent; state: HeartbeatState }> {
    const queue = async (db: Kysely<Database>) => {
      const cadence = await state(db, now);
      const row = await db
        .insertInto('heartbeat_events')
        .values({ text, source, created_at: now })
        .returningAll()
        .executeTakeFirstOrThrow();
      return { event: eventFromRow(row), state: cadence };
    };
    return trx ? queue(trx) : this.#db.transaction().execute(queue);
  }

  /** Events no run has taken yet, oldest first. */
  async pendingEvents(): Promise<HeartbeatEvent[]> {
    return pendingEvents(this.#db);
  }

  /** Events carried by a run, oldest first. */
  async eventsOf(runId: number): Promise<HeartbeatEvent[]> {
    const rows = await this.#db
      .selectFrom('heartbeat_events')
      .selectAll()
      .where('run_id', '=', runId)
      .orderBy('id')
      .execute();
    return rows.map(eventFromRow);
  }

  /**
   * Writes a run's intent (status `posting`), claims the events waiting for it and moves the cadence anchor to `now`,
   * in one transaction. `build` makes the prompt from the tasks and the events still waiting at that moment.
   */
  async beginRun(input: {
    messageId: string;
    reason: string;
    now: number;
    build: (tasks: HeartbeatTask[], events: HeartbeatEvent[]) => string;
  }): Promise<HeartbeatRun> {
    return this.#db.transaction().execute(async (trx) => {
      const tasks = await listTasks(trx);
      const events = await pendingEvents(trx);
      const prompt = input.build(tasks, events);
      const row = await trx
        .insertInto('heartbeat_runs')
        .values({
          message_id: input.messageId,
          reason: input.reason,
          prompt,
          status: 'posting',
          attempts: 1,
          tasks: tasks.length,
          events: events.length,
          created_at: input.now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      if (events.length > 0) {
        await trx
          .updateTable('heartbeat_events')
          .set({ run_id: row.id })
          .where(
            'id',
            'in',
            events.map((e) => e.id),
          )
          .execute();
      }
      const cadence = { anchor_at: input.now, last_reason: input.reason };
      await trx
        .insertInto('heartbeat_state')
        .values({ id: STATE_ID, ...cadence })
        .onConflict((oc) => oc.column('id').doUpdateSet(cadence))
        .execute();
      return runFromRow(row);
    });
  }

  /** Counts one more attempt at posting a run found unfinished after a restart. */
  async retryRun(id: number): Promise<void> {
    await countRunAttempt(this.#db, 'heartbeat_runs', id);
  }

  /** Records a run as accepted by the engine, sets the last run time and keeps the newest `keepRuns` finished runs. */
  async finishRun(id: number, outcome: PostedOutcome, keepRuns: number): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await markRunPosted(trx, 'heartbeat_runs', id, outcome);
      await trx.updateTable('heartbeat_state').set({ last_run_at: outcome.now }).where('id', '=', STATE_ID).execute();
      await trx
        .deleteFrom('heartbeat_runs')
        .where('status', '!=', 'posting')
        .where('id', 'not in', (eb) =>
          eb.selectFrom('heartbeat_runs').select('id').orderBy('id', 'desc').limit(keepRuns),
        )
        .execute();
    });
  }

  /**
   * Records a run that was refused (`failed`: its events wait for the next run again) or cut off by crashes twice
   * (`abandoned`: its events stay with it, as it was most likely accepted).
   */
  async failRun(id: number, status: 'failed' | 'abandoned', error: string, now: number): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await markRunEnded(trx, 'heartbeat_runs', id, status, error, now);
      if (status === 'failed')
        await trx.updateTable('heartbeat_events').set({ run_id: null }).where('run_id', '=', id).execute();
    });
  }

  /** One run by id. */
  async run(id: number): Promise<HeartbeatRun | undefined> {
    const row = await this.#db.selectFrom('heartbeat_runs').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? runFromRow(row) : undefined;
  }

  /** Runs whose post was started and never recorded, oldest first. */
  async unfinishedRuns(): Promise<HeartbeatRun[]> {
    const rows = await this.#db
      .selectFrom('heartbeat_runs')
      .selectAll()
      .where('status', '=', 'posting')
      .orderBy('id')
      .execute();
    return rows.map(runFromRow);
  }

  /** The newest runs, newest first. */
  async runs(limit = 20): Promise<HeartbeatRun[]> {
    const rows = await this.#db.selectFrom('heartbeat_runs').selectAll().orderBy('id', 'desc').limit(limit).execute();
    return rows.map(runFromRow);
  }
}

/** The cadence state read through `db` (the store or a transaction); inserted with `anchorAt = now` only when missing. */
async function state(db: Kysely<Database>, now: number): Promise<HeartbeatState> {
  const read = () => db.selectFrom('heartbeat_state').selectAll().where('id', '=', STATE_ID).executeTakeFirst();
  const row = await read();
  if (row) return stateFromRow(row);
  await db
    .insertInto('heartbeat_state')
    .values({ id: STATE_ID, anchor_at: now })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  const made = await read();
  if (!made) throw new Error('heartbeat_state: the cadence row is missing right after it was inserted');
  return stateFromRow(made);
}

async function listTasks(db: Kysely<Database>): Promise<HeartbeatTask[]> {
  const rows = await db.selectFrom('heartbeat_tasks').selectAll().orderBy('created_at').orderBy('id').execute();
  return rows.map(taskFromRow);
}

async function pendingEvents(db: Kysely<Database>): Promise<HeartbeatEvent[]> {
  const rows = await db.selectFrom('heartbeat_events').selectAll().where('run_id', 'is', null).orderBy('id').execute();
  return rows.map(eventFromRow);
}
