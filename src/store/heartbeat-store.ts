import type { DatabaseSync } from 'node:sqlite';
import { transaction } from './database.ts';

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

interface RunRow {
  id: number;
  message_id: string;
  reason: string;
  prompt: string;
  status: string;
  attempts: number;
  tasks: number;
  events: number;
  session_id: string | null;
  duplicate: number;
  error: string | null;
  created_at: number;
  finished_at: number | null;
}

function runFromRow(r: RunRow): HeartbeatRun {
  return {
    id: r.id,
    messageId: r.message_id,
    reason: r.reason,
    prompt: r.prompt,
    status: r.status as HeartbeatRunStatus,
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

interface EventRow {
  id: number;
  text: string;
  source: string;
  created_at: number;
  run_id: number | null;
}

function eventFromRow(r: EventRow): HeartbeatEvent {
  return { id: r.id, text: r.text, source: r.source, createdAt: r.created_at, runId: r.run_id };
}

/** SQLite persistence of the heartbeat: tasks, cadence, queued events and runs. */
export class HeartbeatStore {
  #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  insertTask(task: HeartbeatTask): void {
    this.#db
      .prepare('INSERT INTO heartbeat_tasks (id, title, prompt, created_at, updated_at) VALUES (?, ?, ?, ?, ?)')
      .run(task.id, task.title, task.prompt, task.createdAt, task.updatedAt);
  }

  /** The task with this id, or else this title. */
  resolveTask(ref: string): HeartbeatTask | undefined {
    const row = this.#db.prepare('SELECT * FROM heartbeat_tasks WHERE id = ? OR title = ? ORDER BY id = ? DESC LIMIT 1').get(ref, ref, ref) as
      | { id: string; title: string; prompt: string; created_at: number; updated_at: number }
      | undefined;
    return row ? { id: row.id, title: row.title, prompt: row.prompt, createdAt: row.created_at, updatedAt: row.updated_at } : undefined;
  }

  /** Every task, oldest first (the order of the batch prompt). */
  listTasks(): HeartbeatTask[] {
    const rows = this.#db.prepare('SELECT * FROM heartbeat_tasks ORDER BY created_at, rowid').all() as unknown as {
      id: string;
      title: string;
      prompt: string;
      created_at: number;
      updated_at: number;
    }[];
    return rows.map((r) => ({ id: r.id, title: r.title, prompt: r.prompt, createdAt: r.created_at, updatedAt: r.updated_at }));
  }

  deleteTask(id: string): boolean {
    return Number(this.#db.prepare('DELETE FROM heartbeat_tasks WHERE id = ?').run(id).changes) > 0;
  }

  /** The cadence state; created with `anchorAt = now` on first use. */
  state(now: number): HeartbeatState {
    this.#db.prepare('INSERT OR IGNORE INTO heartbeat_state (id, anchor_at) VALUES (1, ?)').run(now);
    const row = this.#db.prepare('SELECT anchor_at, last_run_at, last_reason FROM heartbeat_state WHERE id = 1').get() as {
      anchor_at: number;
      last_run_at: number | null;
      last_reason: string | null;
    };
    return { anchorAt: row.anchor_at, lastRunAt: row.last_run_at, lastReason: row.last_reason };
  }

  /** A timer tick with nothing to send: the cadence moves on without a run. */
  setAnchor(at: number): void {
    this.#db.prepare('UPDATE heartbeat_state SET anchor_at = ? WHERE id = 1').run(at);
  }

  /** Queues text for the next run; returns the event. */
  addEvent(text: string, source: string, now: number): HeartbeatEvent {
    const result = this.#db.prepare('INSERT INTO heartbeat_events (text, source, created_at) VALUES (?, ?, ?)').run(text, source, now);
    return { id: Number(result.lastInsertRowid), text, source, createdAt: now, runId: null };
  }

  /** Events no run has taken yet, oldest first. */
  pendingEvents(): HeartbeatEvent[] {
    return (this.#db.prepare('SELECT * FROM heartbeat_events WHERE run_id IS NULL ORDER BY id').all() as unknown as EventRow[]).map(eventFromRow);
  }

  /** Events carried by a run. */
  eventsOf(runId: number): HeartbeatEvent[] {
    return (this.#db.prepare('SELECT * FROM heartbeat_events WHERE run_id = ? ORDER BY id').all(runId) as unknown as EventRow[]).map(eventFromRow);
  }

  /**
   * Writes a run's intent (status `posting`), claims the given events for it and moves the cadence anchor to `now`,
   * in one transaction. `build` makes the prompt from the tasks and the events still waiting at that moment.
   */
  beginRun(input: { messageId: string; reason: string; now: number; build: (tasks: HeartbeatTask[], events: HeartbeatEvent[]) => string }): HeartbeatRun {
    return transaction(this.#db, () => {
      this.state(input.now);
      const tasks = this.listTasks();
      const events = this.pendingEvents();
      const prompt = input.build(tasks, events);
      const result = this.#db
        .prepare(
          `INSERT INTO heartbeat_runs (message_id, reason, prompt, status, attempts, tasks, events, created_at)
           VALUES (?, ?, ?, 'posting', 1, ?, ?, ?)`,
        )
        .run(input.messageId, input.reason, prompt, tasks.length, events.length, input.now);
      const runId = Number(result.lastInsertRowid);
      const claim = this.#db.prepare('UPDATE heartbeat_events SET run_id = ? WHERE id = ?');
      for (const event of events) claim.run(runId, event.id);
      this.#db.prepare('UPDATE heartbeat_state SET anchor_at = ?, last_reason = ? WHERE id = 1').run(input.now, input.reason);
      return this.run(runId) as HeartbeatRun;
    });
  }

  /** Counts one more attempt at posting a run found unfinished after a restart. */
  retryRun(id: number): void {
    this.#db.prepare('UPDATE heartbeat_runs SET attempts = attempts + 1 WHERE id = ?').run(id);
  }

  /** Records a run as accepted by the engine, sets the last run time, trims old runs. */
  finishRun(id: number, outcome: { sessionId: string; duplicate: boolean; now: number }, keepRuns: number): void {
    transaction(this.#db, () => {
      this.#db
        .prepare("UPDATE heartbeat_runs SET status = 'posted', session_id = ?, duplicate = ?, finished_at = ?, error = NULL WHERE id = ?")
        .run(outcome.sessionId, outcome.duplicate ? 1 : 0, outcome.now, id);
      this.#db.prepare('UPDATE heartbeat_state SET last_run_at = ? WHERE id = 1').run(outcome.now);
      this.#trim(keepRuns);
    });
  }

  /**
   * Records a run that was refused (`failed`: its events wait for the next run again) or cut off by crashes twice
   * (`abandoned`: its events stay with it, as it was most likely accepted).
   */
  failRun(id: number, status: 'failed' | 'abandoned', error: string, now: number): void {
    transaction(this.#db, () => {
      this.#db.prepare('UPDATE heartbeat_runs SET status = ?, error = ?, finished_at = ? WHERE id = ?').run(status, error, now, id);
      if (status === 'failed') this.#db.prepare('UPDATE heartbeat_events SET run_id = NULL WHERE run_id = ?').run(id);
    });
  }

  run(id: number): HeartbeatRun | undefined {
    const row = this.#db.prepare('SELECT * FROM heartbeat_runs WHERE id = ?').get(id) as RunRow | undefined;
    return row ? runFromRow(row) : undefined;
  }

  /** Runs whose post was started and never recorded, oldest first. */
  unfinishedRuns(): HeartbeatRun[] {
    return (this.#db.prepare("SELECT * FROM heartbeat_runs WHERE status = 'posting' ORDER BY id").all() as unknown as RunRow[]).map(runFromRow);
  }

  /** The newest runs, newest first. */
  runs(limit = 20): HeartbeatRun[] {
    return (this.#db.prepare('SELECT * FROM heartbeat_runs ORDER BY id DESC LIMIT ?').all(limit) as unknown as RunRow[]).map(runFromRow);
  }

  #trim(keep: number): void {
    this.#db
      .prepare(
        `DELETE FROM heartbeat_runs WHERE status != 'posting' AND id NOT IN (SELECT id FROM heartbeat_runs ORDER BY id DESC LIMIT ?)`,
      )
      .run(keep);
  }
}
