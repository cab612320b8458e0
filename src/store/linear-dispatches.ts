import type { DatabaseSync } from 'node:sqlite';
import type { HarnessName } from '../core/config.ts';
import type { PipelineTier } from '../core/config-linear-pipeline.ts';

/**
 * Lifecycle of a dispatch: `queued` (waiting for a slot under the concurrency cap) → `dispatched` (slot taken, worktree
 * being prepared) → `working` (worker session) → `auditing` (auditor session) → `done`, or back to `working` for a
 * rework, or `stuck` (attempts used up, watchdog killed twice, stale, or setup failed). `stopped` is terminal too: the
 * user sent a stop from Linear. A later prompt reopens a finished dispatch (→ `queued`, stop flag cleared).
 */
export const DISPATCH_STATUSES = ['queued', 'dispatched', 'working', 'auditing', 'done', 'stuck', 'stopped'] as const;
export type DispatchStatus = (typeof DISPATCH_STATUSES)[number];

/** Statuses of a dispatch in progress: at most one per issue. */
export const ACTIVE_DISPATCH_STATUSES: readonly DispatchStatus[] = ['queued', 'dispatched', 'working', 'auditing'];
/** Statuses that hold one of the `maxConcurrent` slots. */
export const SLOT_STATUSES: readonly DispatchStatus[] = ['dispatched', 'working', 'auditing'];
/** Finished statuses (pruned after `pruneAfterSec`). */
export const FINISHED_DISPATCH_STATUSES: readonly DispatchStatus[] = ['done', 'stuck', 'stopped'];

/** Every allowed edge of the state machine; `transition` refuses any other. */
export const DISPATCH_TRANSITIONS: Readonly<Record<DispatchStatus, readonly DispatchStatus[]>> = {
  queued: ['dispatched', 'stopped'],
  dispatched: ['working', 'stuck', 'stopped'],
  working: ['auditing', 'stuck', 'stopped'],
  auditing: ['done', 'working', 'stuck', 'stopped'],
  done: ['queued'],
  stuck: ['queued'],
  stopped: ['queued'],
};

/** Free-form context of a dispatch kept with its row (all user text already sanitized). */
export interface DispatchContextData {
  /** The issue's Linear URL. */
  issueUrl?: string;
  /** The text that started the dispatch (agent session prompt, comment…). */
  prompt?: string;
  /** Linear's promptContext of the agent session. */
  promptContext?: string;
  /** Bodies of the guidance rules Linear sent. */
  guidance?: string[];
  /** Follow-up messages of the user (Linear prompts), oldest first. */
  userMessages?: string[];
  /** The gaps of the last failed audit, handed to the next worker. */
  lastGaps?: string[];
  /** Linear prompt activities already taken in (newest last, capped), so a redelivered prompt is not taken twice. */
  promptIds?: string[];
  /** The first thought told to the agent session (kept so a re-run after a crash can send it if it was lost). */
  pickedUp?: string;
}

/** One dispatch of one Linear issue. */
export interface DispatchRecord {
  id: string;
  issueId: string;
  identifier: string;
  title: string;
  agentSessionId: string | null;
  status: DispatchStatus;
  /** Worker attempt number, from 1; grows across rework rounds and reopenings. */
  attempt: number;
  /** First attempt of the current round (a reopen starts a new round with a fresh `maxAttempts` budget). */
  roundStart: number;
  tier: PipelineTier;
  tierReason: string;
  harness: HarnessName;
  model: string | null;
  auditHarness: HarnessName;
  auditModel: string | null;
  profile: string | null;
  repoPath: string;
  branch: string;
  worktreePath: string | null;
  context: DispatchContextData;
  stopRequested: boolean;
  queueSeq: number | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
  lastActivityAt: number;
  completedAt: number | null;
}

export type NewDispatch = Omit<
  DispatchRecord,
  'status' | 'attempt' | 'roundStart' | 'stopRequested' | 'queueSeq' | 'lastError' | 'updatedAt' | 'lastActivityAt' | 'completedAt' | 'worktreePath'
>;

/** Fields a transition or an update may change besides the status. */
export type DispatchPatch = Partial<
  Pick<DispatchRecord, 'attempt' | 'roundStart' | 'lastError' | 'stopRequested' | 'worktreePath' | 'context' | 'agentSessionId' | 'lastActivityAt'>
>;

export type DispatchPhase = 'worker' | 'audit';
/** Why the pipeline itself ended a session (null: it ended on its own). */
export type SessionEndCause = 'watchdog' | 'stop' | 'stale';

/** One coding session working for a dispatch. */
export interface DispatchSession {
  seq: number;
  sessionId: string;
  dispatchId: string;
  phase: DispatchPhase;
  attempt: number;
  /** 1, or 2 for the one retry after a watchdog kill. */
  try: number;
  endCause: SessionEndCause | null;
  startedAt: number;
  endedAt: number | null;
}

interface DispatchRow {
  id: string;
  issue_id: string;
  identifier: string;
  title: string;
  agent_session_id: string | null;
  status: string;
  attempt: number;
  round_start: number;
  tier: string;
  tier_reason: string;
  harness: string;
  model: string | null;
  audit_harness: string;
  audit_model: string | null;
  profile: string | null;
  repo_path: string;
  branch: string;
  worktree_path: string | null;
  context: string;
  stop_requested: number;
  queue_seq: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  last_activity_at: number;
  completed_at: number | null;
}

interface SessionRow {
  seq: number;
  session_id: string;
  dispatch_id: string;
  phase: string;
  attempt: number;
  try: number;
  end_cause: string | null;
  started_at: number;
  ended_at: number | null;
}

const PATCH_COLUMNS: Record<keyof DispatchPatch, string> = {
  attempt: 'attempt',
  roundStart: 'round_start',
  lastError: 'last_error',
  stopRequested: 'stop_requested',
  worktreePath: 'worktree_path',
  context: 'context',
  agentSessionId: 'agent_session_id',
  lastActivityAt: 'last_activity_at',
};

function patchValue(key: keyof DispatchPatch, value: unknown): string | number | null {
  if (value === undefined || value === null) return null;
  if (key === 'context') return JSON.stringify(value);
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value as string | number;
}

function fromRow(row: DispatchRow): DispatchRecord {
  return {
    id: row.id,
    issueId: row.issue_id,
    identifier: row.identifier,
    title: row.title,
    agentSessionId: row.agent_session_id,
    status: row.status as DispatchStatus,
    attempt: row.attempt,
    roundStart: row.round_start,
    tier: row.tier as PipelineTier,
    tierReason: row.tier_reason,
    harness: row.harness as HarnessName,
    model: row.model,
    auditHarness: row.audit_harness as HarnessName,
    auditModel: row.audit_model,
    profile: row.profile,
    repoPath: row.repo_path,
    branch: row.branch,
    worktreePath: row.worktree_path,
    context: JSON.parse(row.context) as DispatchContextData,
    stopRequested: row.stop_requested !== 0,
    queueSeq: row.queue_seq,
    lastError: row.last_error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastActivityAt: row.last_activity_at,
    completedAt: row.completed_at,
  };
}

function sessionFromRow(row: SessionRow): DispatchSession {
  return {
    seq: row.seq,
    sessionId: row.session_id,
    dispatchId: row.dispatch_id,
    phase: row.phase as DispatchPhase,
    attempt: row.attempt,
    try: row.try,
    endCause: row.end_cause as SessionEndCause | null,
    startedAt: row.started_at,
    endedAt: row.ended_at,
  };
}

function placeholders(n: number): string {
  return Array.from({ length: n }, () => '?').join(', ');
}

const NEXT_QUEUE_SEQ = '(SELECT COALESCE(MAX(queue_seq), 0) + 1 FROM linear_dispatches)';

/**
 * Durable dispatch state in SQLite. Every status change is one conditional UPDATE (compare-and-swap on the expected
 * status, and attempt when given), so of many concurrent callers exactly one wins, across connections and processes.
 */
export class DispatchStore {
  #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /**
   * Inserts a new dispatch as `queued` at the back of the queue. While the issue has an active dispatch, nothing is
   * inserted and that dispatch is returned with `created: false` (the unique index decides, so a race has one winner).
   */
  insert(input: NewDispatch): { record: DispatchRecord; created: boolean } {
    try {
      const row = this.#db
        .prepare(
          `INSERT INTO linear_dispatches (id, issue_id, identifier, title, agent_session_id, status, tier, tier_reason, harness, model,
             audit_harness, audit_model, profile, repo_path, branch, context, queue_seq, created_at, updated_at, last_activity_at)
           VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ${NEXT_QUEUE_SEQ}, ?, ?, ?) RETURNING *`,
        )
        .get(
          input.id,
          input.issueId,
          input.identifier,
          input.title,
          input.agentSessionId,
          input.tier,
          input.tierReason,
          input.harness,
          input.model,
          input.auditHarness,
          input.auditModel,
          input.profile,
          input.repoPath,
          input.branch,
          JSON.stringify(input.context),
          input.createdAt,
          input.createdAt,
          input.createdAt,
        ) as unknown as DispatchRow;
      return { record: fromRow(row), created: true };
    } catch (error) {
      if (!(error instanceof Error) || !/UNIQUE constraint failed/.test(error.message)) throw error;
      const active = this.activeForIssue(input.issueId);
      if (!active) throw error;
      return { record: active, created: false };
    }
  }

  get(id: string): DispatchRecord | null {
    const row = this.#db.prepare('SELECT * FROM linear_dispatches WHERE id = ?').get(id) as DispatchRow | undefined;
    return row ? fromRow(row) : null;
  }

  /** The dispatch in progress for an issue, if any. */
  activeForIssue(issueId: string): DispatchRecord | null {
    const row = this.#db
      .prepare(`SELECT * FROM linear_dispatches WHERE issue_id = ? AND status IN (${placeholders(ACTIVE_DISPATCH_STATUSES.length)})`)
      .get(issueId, ...ACTIVE_DISPATCH_STATUSES) as DispatchRow | undefined;
    return row ? fromRow(row) : null;
  }

  /** The newest dispatch linked to a Linear agent session, if any. */
  latestForAgentSession(agentSessionId: string): DispatchRecord | null {
    const row = this.#db
      .prepare('SELECT * FROM linear_dispatches WHERE agent_session_id = ? ORDER BY created_at DESC, rowid DESC LIMIT 1')
      .get(agentSessionId) as DispatchRow | undefined;
    return row ? fromRow(row) : null;
  }

  /** The newest dispatch of an issue (by id or identifier), if any. */
  latestForIssue(ref: string): DispatchRecord | null {
    const row = this.#db
      .prepare('SELECT * FROM linear_dispatches WHERE issue_id = ? OR identifier = ? ORDER BY created_at DESC, rowid DESC LIMIT 1')
      .get(ref, ref) as DispatchRow | undefined;
    return row ? fromRow(row) : null;
  }

  /** Dispatches, oldest first, optionally filtered by status. */
  list(statuses?: readonly DispatchStatus[]): DispatchRecord[] {
    const rows = (
      statuses
        ? this.#db
            .prepare(`SELECT * FROM linear_dispatches WHERE status IN (${placeholders(statuses.length)}) ORDER BY created_at, rowid`)
            .all(...statuses)
        : this.#db.prepare('SELECT * FROM linear_dispatches ORDER BY created_at, rowid').all()
    ) as unknown as DispatchRow[];
    return rows.map(fromRow);
  }

  /**
   * Moves a dispatch from one of `from` to `to` in one conditional UPDATE, optionally only at the expected attempt.
   * Returns the new record, or null when the row was not in an expected state (another caller won). Throws for an
   * edge the state machine does not have. Entering `queued` puts it at the back of the queue; entering a finished
   * status sets `completedAt`.
   */
  transition(
    id: string,
    from: DispatchStatus | readonly DispatchStatus[],
    to: DispatchStatus,
    now: number,
    options: { attempt?: number; patch?: DispatchPatch } = {},
  ): DispatchRecord | null {
    const froms: readonly DispatchStatus[] = typeof from === 'string' ? [from] : from;
    for (const f of froms) {
      if (!DISPATCH_TRANSITIONS[f].includes(to)) throw new Error(`dispatch transition ${f} → ${to} is not allowed`);
    }
    const sets = ['status = ?', 'updated_at = ?'];
    const values: (string | number | null)[] = [to, now];
    if (to === 'queued') sets.push(`queue_seq = ${NEXT_QUEUE_SEQ}`, 'completed_at = NULL');
    if (FINISHED_DISPATCH_STATUSES.includes(to)) {
      sets.push('completed_at = ?');
      values.push(now);
    }
    for (const [key, value] of Object.entries(options.patch ?? {}) as [keyof DispatchPatch, unknown][]) {
      sets.push(`${PATCH_COLUMNS[key]} = ?`);
      values.push(patchValue(key, value));
    }
    let where = `id = ? AND status IN (${placeholders(froms.length)})`;
    values.push(id, ...froms);
    if (options.attempt !== undefined) {
      where += ' AND attempt = ?';
      values.push(options.attempt);
    }
    const row = this.#db.prepare(`UPDATE linear_dispatches SET ${sets.join(', ')} WHERE ${where} RETURNING *`).get(...values) as
      | DispatchRow
      | undefined;
    return row ? fromRow(row) : null;
  }

  /**
   * Takes a slot for the oldest queued dispatch when fewer than `cap` dispatches hold one: queued → dispatched in
   * one statement (so two callers never both take the last slot). Returns the dispatch, or null when none moved.
   */
  claimNextQueued(cap: number, now: number): DispatchRecord | null {
    const row = this.#db
      .prepare(
        `UPDATE linear_dispatches SET status = 'dispatched', updated_at = ?, last_activity_at = ?
         WHERE id = (SELECT id FROM linear_dispatches WHERE status = 'queued' ORDER BY queue_seq LIMIT 1)
           AND (SELECT COUNT(*) FROM linear_dispatches WHERE status IN (${placeholders(SLOT_STATUSES.length)})) < ?
         RETURNING *`,
      )
      .get(now, now, ...SLOT_STATUSES, cap) as DispatchRow | undefined;
    return row ? fromRow(row) : null;
  }

  /** 1-based position of a queued dispatch in the queue, or null when it is not queued. */
  queuePosition(id: string): number | null {
    const row = this.#db
      .prepare(
        `SELECT (SELECT COUNT(*) FROM linear_dispatches q WHERE q.status = 'queued' AND q.queue_seq <= d.queue_seq) AS pos
         FROM linear_dispatches d WHERE d.id = ? AND d.status = 'queued'`,
      )
      .get(id) as { pos: number } | undefined;
    return row ? row.pos : null;
  }

  /** Updates fields that are not the status (worktree path, context, activity time). Returns the new record. */
  update(id: string, patch: DispatchPatch, now: number): DispatchRecord | null {
    const entries = Object.entries(patch) as [keyof DispatchPatch, unknown][];
    const sets = ['updated_at = ?', ...entries.map(([key]) => `${PATCH_COLUMNS[key]} = ?`)];
    const values = [now, ...entries.map(([key, value]) => patchValue(key, value))];
    const row = this.#db.prepare(`UPDATE linear_dispatches SET ${sets.join(', ')} WHERE id = ? RETURNING *`).get(...values, id) as
      | DispatchRow
      | undefined;
    return row ? fromRow(row) : null;
  }

  /** Records activity on a dispatch (the monitor marks dispatches without any for `staleAfterSec` as stuck). */
  touch(id: string, now: number): void {
    this.#db.prepare('UPDATE linear_dispatches SET last_activity_at = ? WHERE id = ? AND last_activity_at < ?').run(now, id, now);
  }

  /** Deletes finished dispatches (and their session map) completed before `before`. Returns how many. */
  prune(before: number): number {
    const result = this.#db
      .prepare(`DELETE FROM linear_dispatches WHERE status IN (${placeholders(FINISHED_DISPATCH_STATUSES.length)}) AND completed_at < ?`)
      .run(...FINISHED_DISPATCH_STATUSES, before);
    return Number(result.changes);
  }

  /** Maps a coding session to a dispatch phase. */
  addSession(session: Omit<DispatchSession, 'seq' | 'endCause' | 'endedAt'>): DispatchSession {
    const row = this.#db
      .prepare(
        'INSERT INTO linear_dispatch_sessions (session_id, dispatch_id, phase, attempt, try, started_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING *',
      )
      .get(session.sessionId, session.dispatchId, session.phase, session.attempt, session.try, session.startedAt) as unknown as SessionRow;
    return sessionFromRow(row);
  }

  /** The dispatch phase a coding session works for, if it is one of the pipeline's. */
  session(sessionId: string): DispatchSession | null {
    const row = this.#db.prepare('SELECT * FROM linear_dispatch_sessions WHERE session_id = ?').get(sessionId) as SessionRow | undefined;
    return row ? sessionFromRow(row) : null;
  }

  /** The newest session of a dispatch (the one its current phase runs in), if any. */
  currentSession(dispatchId: string): DispatchSession | null {
    const row = this.#db
      .prepare('SELECT * FROM linear_dispatch_sessions WHERE dispatch_id = ? ORDER BY seq DESC LIMIT 1')
      .get(dispatchId) as SessionRow | undefined;
    return row ? sessionFromRow(row) : null;
  }

  /** Every session of a dispatch, oldest first. */
  sessions(dispatchId: string): DispatchSession[] {
    const rows = this.#db
      .prepare('SELECT * FROM linear_dispatch_sessions WHERE dispatch_id = ? ORDER BY seq')
      .all(dispatchId) as unknown as SessionRow[];
    return rows.map(sessionFromRow);
  }

  /** Records why the pipeline is ending a session, before it kills it; the first cause wins. Returns whether set. */
  setEndCause(sessionId: string, cause: SessionEndCause): boolean {
    const result = this.#db
      .prepare('UPDATE linear_dispatch_sessions SET end_cause = ? WHERE session_id = ? AND end_cause IS NULL AND ended_at IS NULL')
      .run(cause, sessionId);
    return Number(result.changes) === 1;
  }

  /** Marks a session's end as handled; true only for the one caller that marks it first. */
  closeSession(sessionId: string, now: number): boolean {
    const result = this.#db
      .prepare('UPDATE linear_dispatch_sessions SET ended_at = ? WHERE session_id = ? AND ended_at IS NULL')
      .run(now, sessionId);
    return Number(result.changes) === 1;
  }
}
