// The durable work queue of the Linear router: work the router took over from a webhook (answer a mention, triage an
// issue, run a planner turn) is written here before the webhook is acknowledged, and run from here, at least once,
// in order per serial key (one planning session's turns never overlap), resumed after a restart.
import type { DatabaseSync } from 'node:sqlite';
import { transaction } from './database.ts';

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

export interface NewJob {
  key: string;
  kind: string;
  serialKey: string;
  agentSessionId?: string | null;
  payload: unknown;
  /** Not before this time (default: now). */
  runAt?: number;
}

interface JobRow {
  seq: number;
  key: string;
  kind: string;
  serial_key: string;
  agent_session_id: string | null;
  payload: string;
  status: string;
  attempts: number;
  next_at: number;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

function fromRow(row: JobRow): LinearJob {
  return {
    seq: row.seq,
    key: row.key,
    kind: row.kind,
    serialKey: row.serial_key,
    agentSessionId: row.agent_session_id,
    payload: JSON.parse(row.payload) as unknown,
    status: row.status as JobStatus,
    attempts: row.attempts,
    nextAt: row.next_at,
    lastError: row.last_error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The job table (migration 460). */
export class LinearJobStore {
  #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /** Queues a job unless one with its key exists; returns the job and whether it is new. */
  enqueue(job: NewJob, now: number): { job: LinearJob; created: boolean } {
    const result = this.#db
      .prepare(
        `INSERT OR IGNORE INTO linear_jobs (key, kind, serial_key, agent_session_id, payload, status, attempts, next_at, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, 'queued', 0, ?, ?, ?)`,
      )
      .run(job.key, job.kind, job.serialKey, job.agentSessionId ?? null, JSON.stringify(job.payload), job.runAt ?? now, now, now);
    return { job: this.get(job.key) as LinearJob, created: result.changes > 0 };
  }

  get(key: string): LinearJob | null {
    const row = this.#db.prepare('SELECT * FROM linear_jobs WHERE key = ?').get(key) as JobRow | undefined;
    return row ? fromRow(row) : null;
  }

  /** Jobs, oldest first, optionally by status. */
  list(statuses?: readonly JobStatus[]): LinearJob[] {
    const rows = statuses
      ? (this.#db.prepare(`SELECT * FROM linear_jobs WHERE status IN (${statuses.map(() => '?').join(', ')}) ORDER BY seq`).all(...statuses) as unknown as JobRow[])
      : (this.#db.prepare('SELECT * FROM linear_jobs ORDER BY seq').all() as unknown as JobRow[]);
    return rows.map(fromRow);
  }

  /**
   * Claims up to `limit` due jobs (status → running, attempts + 1), in seq order, at most one per serial key and
   * only the first queued job of a serial key that has nothing running. One transaction.
   */
  claimDue(now: number, limit: number): LinearJob[] {
    if (limit <= 0) return [];
    return transaction(this.#db, () => {
      const rows = this.#db
        .prepare(
          `SELECT j.* FROM linear_jobs j
           WHERE j.status = 'queued' AND j.next_at <= ?
             AND NOT EXISTS (SELECT 1 FROM linear_jobs r WHERE r.serial_key = j.serial_key AND r.status = 'running')
             AND NOT EXISTS (SELECT 1 FROM linear_jobs e WHERE e.serial_key = j.serial_key AND e.status = 'queued' AND e.seq < j.seq)
           ORDER BY j.seq LIMIT ?`,
        )
        .all(now, limit) as unknown as JobRow[];
      const claim = this.#db.prepare("UPDATE linear_jobs SET status = 'running', attempts = attempts + 1, updated_at = ? WHERE seq = ? AND status = 'queued'");
      return rows.map((row) => {
        claim.run(now, row.seq);
        return { ...fromRow(row), status: 'running' as const, attempts: row.attempts + 1, updatedAt: now };
      });
    });
  }

  /** Ends a running job; returns false when it was not running (cancelled meanwhile). */
  finish(seq: number, status: 'done' | 'failed' | 'cancelled', error: string | null, now: number): boolean {
    const result = this.#db
      .prepare("UPDATE linear_jobs SET status = ?, last_error = ?, updated_at = ? WHERE seq = ? AND status = 'running'")
      .run(status, error, now, seq);
    return result.changes > 0;
  }

  /** Puts a running job back in the queue to run again at `nextAt`. */
  retry(seq: number, error: string, nextAt: number, now: number): boolean {
    const result = this.#db
      .prepare("UPDATE linear_jobs SET status = 'queued', last_error = ?, next_at = ?, updated_at = ? WHERE seq = ? AND status = 'running'")
      .run(error, nextAt, now, seq);
    return result.changes > 0;
  }

  /** After a restart: jobs left running by the last process are queued again (their attempt stays counted). */
  recoverInterrupted(now: number): number {
    return Number(this.#db.prepare("UPDATE linear_jobs SET status = 'queued', next_at = ?, updated_at = ? WHERE status = 'running'").run(now, now).changes);
  }

  /** Cancels the queued and running jobs of an agent session; returns the jobs cancelled. */
  cancelForSession(agentSessionId: string, now: number): LinearJob[] {
    return transaction(this.#db, () => {
      const rows = this.#db
        .prepare("SELECT * FROM linear_jobs WHERE agent_session_id = ? AND status IN ('queued', 'running')")
        .all(agentSessionId) as unknown as JobRow[];
      this.#db
        .prepare("UPDATE linear_jobs SET status = 'cancelled', last_error = 'stopped from Linear', updated_at = ? WHERE agent_session_id = ? AND status IN ('queued', 'running')")
        .run(now, agentSessionId);
      return rows.map(fromRow);
    });
  }

  /** True when a job of `kind` with `serialKey` is queued or running. */
  hasOpen(serialKey: string, kind: string): boolean {
    return this.#db.prepare("SELECT 1 FROM linear_jobs WHERE serial_key = ? AND kind = ? AND status IN ('queued', 'running') LIMIT 1").get(serialKey, kind) !== undefined;
  }

  /** The earliest `next_at` of a queued job after `now`, if any. */
  nextDueAfter(now: number): number | undefined {
    const row = this.#db.prepare("SELECT MIN(next_at) AS due FROM linear_jobs WHERE status = 'queued' AND next_at > ?").get(now) as { due: number | null };
    return row.due ?? undefined;
  }

  /** True when a queued job is due now. */
  hasDue(now: number): boolean {
    return this.#db.prepare("SELECT 1 FROM linear_jobs WHERE status = 'queued' AND next_at <= ? LIMIT 1").get(now) !== undefined;
  }

  /** Deletes finished jobs last updated before `before`. */
  prune(before: number): number {
    return Number(this.#db.prepare("DELETE FROM linear_jobs WHERE status IN ('done', 'failed', 'cancelled') AND updated_at < ?").run(before).changes);
  }
}
