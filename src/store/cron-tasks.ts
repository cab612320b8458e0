import type { DatabaseSync } from 'node:sqlite';
import { transaction } from './database.ts';

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

interface TaskRow {
  id: string;
  name: string;
  schedule: string;
  timezone: string | null;
  prompt: string;
  enabled: number;
  created_at: number;
  updated_at: number;
  last_run_at: number | null;
  last_due_at: number | null;
  next_run_at: number | null;
}

interface RunRow {
  id: number;
  task_id: string;
  due_at: number;
  kind: string;
  status: string;
  missed: number;
  first_missed_at: number | null;
  prompt: string;
  message_id: string;
  attempts: number;
  session_id: string | null;
  duplicate: number;
  error: string | null;
  created_at: number;
  finished_at: number | null;
}

function taskFromRow(r: TaskRow): CronTask {
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

function runFromRow(r: RunRow): CronRun {
  return {
    id: r.id,
    taskId: r.task_id,
    dueAt: r.due_at,
    kind: r.kind as CronRunKind,
    status: r.status as CronRunStatus,
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

/** SQLite persistence of cron tasks and their runs. Every method is one statement or one transaction. */
export class CronTaskStore {
  #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /** Inserts a new task. Throws on a duplicate id or name (the caller checks names first for a clear error). */
  insert(task: CronTask): void {
    this.#db
      .prepare(
        `INSERT INTO cron_tasks (id, name, schedule, timezone, prompt, enabled, created_at, updated_at, last_run_at, last_due_at, next_run_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        task.id,
        task.name,
        task.schedule,
        task.timezone,
        task.prompt,
        task.enabled ? 1 : 0,
        task.createdAt,
        task.updatedAt,
        task.lastRunAt,
        task.lastDueAt,
        task.nextRunAt,
      );
  }

  /** The task with this id, or else this name; undefined when there is none. */
  resolve(ref: string): CronTask | undefined {
    const row = this.#db.prepare('SELECT * FROM cron_tasks WHERE id = ? OR name = ? ORDER BY id = ? DESC LIMIT 1').get(ref, ref, ref) as
      | TaskRow
      | undefined;
    return row ? taskFromRow(row) : undefined;
  }

  /** Every task, oldest first. */
  list(): CronTask[] {
    return (this.#db.prepare('SELECT * FROM cron_tasks ORDER BY created_at, rowid').all() as unknown as TaskRow[]).map(taskFromRow);
  }

  /** Turns a task on (with its next due time) or off (next due time cleared). */
  setEnabled(id: string, enabled: boolean, nextRunAt: number | null, now: number): void {
    this.#db.prepare('UPDATE cron_tasks SET enabled = ?, next_run_at = ?, updated_at = ? WHERE id = ?').run(enabled ? 1 : 0, nextRunAt, now, id);
  }

  /** Sets the next due time of a task. */
  setNextRun(id: string, nextRunAt: number | null): void {
    this.#db.prepare('UPDATE cron_tasks SET next_run_at = ? WHERE id = ?').run(nextRunAt, id);
  }

  /** Deletes a task and its runs; returns false when there was none. */
  delete(id: string): boolean {
    return Number(this.#db.prepare('DELETE FROM cron_tasks WHERE id = ?').run(id).changes) > 0;
  }

  /**
   * Writes the intent to post run `dueAt` of a task (status `posting`, attempts 1) and moves the task on (last due
   * time, next due time), in one transaction. Returns the run, or null when a row for this due time already exists or
   * the task has already passed it (it was fired, skipped or abandoned before: never fire it twice).
   */
  beginRun(input: {
    taskId: string;
    dueAt: number;
    kind: 'scheduled' | 'catch-up';
    missed: number;
    firstMissedAt: number | null;
    prompt: string;
    messageId: string;
    now: number;
    nextRunAt: number | null;
  }): CronRun | null {
    return transaction(this.#db, () => {
      const task = this.#db.prepare('SELECT last_due_at FROM cron_tasks WHERE id = ?').get(input.taskId) as { last_due_at: number | null } | undefined;
      if (!task || (task.last_due_at !== null && task.last_due_at >= input.dueAt)) return null;
      const result = this.#db
        .prepare(
          `INSERT OR IGNORE INTO cron_runs (task_id, due_at, kind, status, missed, first_missed_at, prompt, message_id, attempts, created_at)
           VALUES (?, ?, ?, 'posting', ?, ?, ?, ?, 1, ?)`,
        )
        .run(input.taskId, input.dueAt, input.kind, input.missed, input.firstMissedAt, input.prompt, input.messageId, input.now);
      if (Number(result.changes) === 0) return null;
      this.#advance(input.taskId, input.dueAt, input.nextRunAt);
      return this.run(Number(result.lastInsertRowid)) ?? null;
    });
  }

  /** Counts one more attempt at posting a run found unfinished after a restart. */
  retryRun(runId: number): void {
    this.#db.prepare('UPDATE cron_runs SET attempts = attempts + 1 WHERE id = ?').run(runId);
  }

  /** Records a run as accepted by the engine (its session, whether it was a duplicate) and trims the task's history. */
  finishRun(run: CronRun, outcome: { sessionId: string; duplicate: boolean; now: number }, keepRuns: number): void {
    transaction(this.#db, () => {
      this.#db
        .prepare("UPDATE cron_runs SET status = 'posted', session_id = ?, duplicate = ?, finished_at = ?, error = NULL WHERE id = ?")
        .run(outcome.sessionId, outcome.duplicate ? 1 : 0, outcome.now, run.id);
      this.#db.prepare('UPDATE cron_tasks SET last_run_at = ? WHERE id = ?').run(outcome.now, run.taskId);
      this.#trim(run.taskId, keepRuns);
    });
  }

  /** Records a run the engine refused (`failed`) or a crashed post not tried again (`abandoned`). */
  failRun(run: CronRun, status: 'failed' | 'abandoned', error: string, now: number, keepRuns: number): void {
    transaction(this.#db, () => {
      this.#db.prepare('UPDATE cron_runs SET status = ?, error = ?, finished_at = ? WHERE id = ?').run(status, error, now, run.id);
      this.#trim(run.taskId, keepRuns);
    });
  }

  /** Records runs missed while the daemon was down and skipped by policy (one row for all of them); the task moves on. */
  recordMissed(input: { taskId: string; firstDueAt: number; lastDueAt: number; count: number; messageId: string; now: number; nextRunAt: number | null }, keepRuns: number): void {
    transaction(this.#db, () => {
      this.#db
        .prepare(
          `INSERT OR IGNORE INTO cron_runs (task_id, due_at, kind, status, missed, first_missed_at, prompt, message_id, attempts, created_at, finished_at)
           VALUES (?, ?, 'missed', 'skipped', ?, ?, '', ?, 0, ?, ?)`,
        )
        .run(input.taskId, input.lastDueAt, input.count, input.firstDueAt, input.messageId, input.now, input.now);
      this.#advance(input.taskId, input.lastDueAt, input.nextRunAt);
      this.#trim(input.taskId, keepRuns);
    });
  }

  /** One run by id. */
  run(id: number): CronRun | undefined {
    const row = this.#db.prepare('SELECT * FROM cron_runs WHERE id = ?').get(id) as RunRow | undefined;
    return row ? runFromRow(row) : undefined;
  }

  /** Runs whose post was started and never recorded (a crash in between), oldest first. */
  unfinishedRuns(): CronRun[] {
    return (this.#db.prepare("SELECT * FROM cron_runs WHERE status = 'posting' ORDER BY due_at, id").all() as unknown as RunRow[]).map(runFromRow);
  }

  /** The newest runs of a task (newest first). */
  runs(taskId: string, limit = 20): CronRun[] {
    return (this.#db.prepare('SELECT * FROM cron_runs WHERE task_id = ? ORDER BY due_at DESC, id DESC LIMIT ?').all(taskId, limit) as unknown as RunRow[]).map(
      runFromRow,
    );
  }

  #advance(taskId: string, dueAt: number, nextRunAt: number | null): void {
    this.#db.prepare('UPDATE cron_tasks SET last_due_at = MAX(COALESCE(last_due_at, ?), ?), next_run_at = ? WHERE id = ?').run(dueAt, dueAt, nextRunAt, taskId);
  }

  #trim(taskId: string, keep: number): void {
    this.#db
      .prepare(
        `DELETE FROM cron_runs WHERE task_id = ? AND status != 'posting' AND id NOT IN
           (SELECT id FROM cron_runs WHERE task_id = ? ORDER BY due_at DESC, id DESC LIMIT ?)`,
      )
      .run(taskId, taskId, keep);
  }
}
