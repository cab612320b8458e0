import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { HarnessName, PermissionMode } from '../core/config.ts';
import type { CursorKey } from '../core/cursor.ts';
import { roundUsd } from '../core/usd.ts';
import { statementCache, transaction } from './database.ts';

/** Lifecycle states of a coding session (the seed's five, plus `interrupted` for runs cut off by a daemon crash). */
export const SESSION_STATUSES = ['starting', 'running', 'completed', 'failed', 'killed', 'interrupted'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/** Statuses that hold a live agent process and count against maxSessions. */
export const ACTIVE_STATUSES: readonly SessionStatus[] = ['starting', 'running'];

/** True for a status that holds a live agent process. */
export function isActiveStatus(status: SessionStatus): boolean {
  return ACTIVE_STATUSES.includes(status);
}

/** One channel's view of a session: streaming live (`on`) or detached, and the last log seq it has seen. */
export interface ChannelView {
  on: boolean;
  seenSeq: number;
}

/** Everything needed to (re)start an agent run for a session. */
export interface LaunchSpec {
  harness: HarnessName;
  prompt: string;
  workdir: string;
  model?: string;
  maxBudgetUsd: number;
  permissionMode: PermissionMode;
  systemPrompt?: string;
  allowedTools?: string[];
  multiTurn: boolean;
  /** Backend session id to resume (Claude session id, Codex thread id, Gemini session id). */
  resumeBackendId?: string;
  forkSession: boolean;
  /**
   * The component that launched the session and handles its events itself (`linear-pipeline`, `code_run`); absent for
   * sessions people or the orchestrator launched. An owned session's events never wake the orchestrator.
   */
  owner?: string;
}

/** The persisted row of one coding session. */
export interface StoredSession {
  id: string;
  name: string;
  harness: HarnessName;
  status: SessionStatus;
  prompt: string;
  workdir: string;
  model: string | null;
  backendSessionId: string | null;
  originChannel: string;
  originSessionId: string | null;
  spec: LaunchSpec;
  costUsd: number;
  startedAt: number;
  completedAt: number | null;
  updatedAt: number;
  error: string | null;
  endReason: string | null;
  budgetExhausted: boolean;
  /** Chat channels that have looked at this session: whether they watch it live, and the last log seq they saw. */
  foreground: Record<string, ChannelView>;
  autoResponds: number;
  resumedFrom: string | null;
  forked: boolean;
  pid: number | null;
}

export type SessionPatch = Partial<Omit<StoredSession, 'id' | 'name' | 'harness' | 'startedAt'>>;

/** Aggregates over every run, running ones included (runs survive eviction of the sessions themselves). */
export interface SessionMetrics {
  totalCostUsd: number;
  costPerDay: Record<string, number>;
  sessionsByStatus: Record<'completed' | 'failed' | 'killed' | 'interrupted' | 'running', number>;
  totalLaunched: number;
  averageDurationMs: number;
  mostExpensive: { id: string; name: string; costUsd: number; prompt: string } | null;
}

interface Row {
  id: string;
  name: string;
  harness: string;
  status: string;
  prompt: string;
  workdir: string;
  model: string | null;
  backend_session_id: string | null;
  origin_channel: string;
  origin_session_id: string | null;
  spec: string;
  cost_usd: number;
  started_at: number;
  completed_at: number | null;
  updated_at: number;
  error: string | null;
  end_reason: string | null;
  budget_exhausted: number;
  foreground: string;
  auto_responds: number;
  resumed_from: string | null;
  forked: number;
  pid: number | null;
}

const COLUMNS: Record<keyof SessionPatch, string> = {
  status: 'status',
  prompt: 'prompt',
  workdir: 'workdir',
  model: 'model',
  backendSessionId: 'backend_session_id',
  originChannel: 'origin_channel',
  originSessionId: 'origin_session_id',
  spec: 'spec',
  costUsd: 'cost_usd',
  completedAt: 'completed_at',
  updatedAt: 'updated_at',
  error: 'error',
  endReason: 'end_reason',
  budgetExhausted: 'budget_exhausted',
  foreground: 'foreground',
  autoResponds: 'auto_responds',
  resumedFrom: 'resumed_from',
  forked: 'forked',
  pid: 'pid',
};

function toColumnValue(key: keyof SessionPatch, value: unknown): string | number | null {
  if (value === undefined || value === null) return null;
  if (key === 'spec' || key === 'foreground') return JSON.stringify(value);
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value as string | number;
}

function fromRow(row: Row): StoredSession {
  return {
    id: row.id,
    name: row.name,
    harness: row.harness as HarnessName,
    status: row.status as SessionStatus,
    prompt: row.prompt,
    workdir: row.workdir,
    model: row.model,
    backendSessionId: row.backend_session_id,
    originChannel: row.origin_channel,
    originSessionId: row.origin_session_id,
    spec: JSON.parse(row.spec) as LaunchSpec,
    costUsd: row.cost_usd,
    startedAt: row.started_at,
    completedAt: row.completed_at,
    updatedAt: row.updated_at,
    error: row.error,
    endReason: row.end_reason,
    budgetExhausted: row.budget_exhausted === 1,
    foreground: JSON.parse(row.foreground) as Record<string, ChannelView>,
    autoResponds: row.auto_responds,
    resumedFrom: row.resumed_from,
    forked: row.forked === 1,
    pid: row.pid,
  };
}

/**
 * What a session list shows of a stored session: the row without what only a run needs (the launch spec is reduced to
 * `multiTurn`, read in SQL so the spec is neither copied nor parsed).
 */
export type SessionListing = Omit<StoredSession, 'spec' | 'originSessionId' | 'updatedAt' | 'autoResponds' | 'pid'> & {
  spec: Pick<LaunchSpec, 'multiTurn'>;
};

/**
 * One page of listed sessions, newest first, and the sort key to continue after (null on the last page). Pages are
 * shared between callers until the next write (see CodingSessionStore.page): read them, never change them.
 */
export interface SessionListingPage {
  readonly sessions: readonly Readonly<SessionListing>[];
  readonly next: CursorKey | null;
}

/** Pages kept between writes; more distinct pages than this between two writes start the cache over. */
const PAGE_CACHE_SIZE = 64;

// A listing row comes back as an array (the statement returns arrays: reading named properties of SQLite's row objects
// costs more than the query itself); these are its columns, in order.
const LISTING_COLUMNS = `rowid, id, name, harness, status, prompt, workdir, model, backend_session_id, origin_channel, cost_usd,
  started_at, completed_at, error, end_reason, budget_exhausted, foreground, resumed_from, forked,
  json_extract(spec, '$.multiTurn')`;

type ListingRow = [
  rowid: number,
  id: string,
  name: string,
  harness: string,
  status: string,
  prompt: string,
  workdir: string,
  model: string | null,
  backendSessionId: string | null,
  originChannel: string,
  costUsd: number,
  startedAt: number,
  completedAt: number | null,
  error: string | null,
  endReason: string | null,
  budgetExhausted: number,
  foreground: string,
  resumedFrom: string | null,
  forked: number,
  multiTurn: number | null,
];

function listingFromRow(row: ListingRow): SessionListing {
  const foreground = row[16];
  return {
    id: row[1],
    name: row[2],
    harness: row[3] as HarnessName,
    status: row[4] as SessionStatus,
    prompt: row[5],
    workdir: row[6],
    model: row[7],
    backendSessionId: row[8],
    originChannel: row[9],
    spec: { multiTurn: row[19] === 1 },
    costUsd: row[10],
    startedAt: row[11],
    completedAt: row[12],
    error: row[13],
    endReason: row[14],
    budgetExhausted: row[15] === 1,
    foreground: foreground === '{}' ? {} : (JSON.parse(foreground) as Record<string, ChannelView>),
    resumedFrom: row[17],
    forked: row[18] === 1,
  };
}

/** The SELECT of one page of the session list; run it with setReturnArrays(true) (exported for the benchmark). */
export function listingPageSql(statusCount: number, afterCursor: boolean): string {
  const where: string[] = [];
  if (statusCount > 0) where.push(`status IN (${Array.from({ length: statusCount }, () => '?').join(',')})`);
  if (afterCursor) where.push('(started_at, rowid) < (?, ?)');
  return `SELECT ${LISTING_COLUMNS} FROM coding_sessions ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY started_at DESC, rowid DESC LIMIT ?`;
}

/** SQLite persistence of coding sessions, their three lookup keys (id, name, backend id) and their runs. */
export class CodingSessionStore {
  #db: DatabaseSync;
  /** Statements prepared once per SQL text (the UPDATE's text varies with the patched columns; a handful of shapes). */
  /** Each SQL text prepared once per store (the hot paths run for every call). */
  readonly #sql: (sql: string) => StatementSync;
  /** Session list pages read since the last write to coding_sessions, by query and parameters. */
  #pages = new Map<string, SessionListingPage>();

  constructor(db: DatabaseSync) {
    this.#db = db;
    this.#sql = statementCache(db);
  }


  /** Inserts a new session and registers its id and name (and backend id, if known) as lookup keys. */
  insert(session: StoredSession): void {
    transaction(this.#db, () => this.#insertRow(session));
  }

  #insertRow(session: StoredSession): void {
    this.#pages.clear();
    this.#sql(
      `INSERT INTO coding_sessions (id, name, harness, status, prompt, workdir, model, backend_session_id, origin_channel,
        origin_session_id, spec, cost_usd, started_at, completed_at, updated_at, error, end_reason, budget_exhausted,
        foreground, auto_responds, resumed_from, forked, pid)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      session.id,
      session.name,
      session.harness,
      session.status,
      session.prompt,
      session.workdir,
      session.model,
      session.backendSessionId,
      session.originChannel,
      session.originSessionId,
      JSON.stringify(session.spec),
      session.costUsd,
      session.startedAt,
      session.completedAt,
      session.updatedAt,
      session.error,
      session.endReason,
      session.budgetExhausted ? 1 : 0,
      JSON.stringify(session.foreground),
      session.autoResponds,
      session.resumedFrom,
      session.forked ? 1 : 0,
      session.pid,
    );
    this.#setKey(session.id, session.id, 'id');
    this.#setKey(session.name, session.id, 'name');
    if (session.backendSessionId) this.#setKey(session.backendSessionId, session.id, 'backend');
  }

  /**
   * Inserts a new session and the start of its first run in one transaction (one fsync); `also` runs inside the same
   * transaction (an idempotency key's answer). Returns the run id.
   */
  insertLaunched(session: StoredSession, at: number, also?: () => void): number {
    return transaction(this.#db, () => {
      this.#insertRow(session);
      const runId = this.startRun(session, 'launch', at);
      also?.();
      return runId;
    });
  }

  /** Updates the given fields; a new backend id also becomes a lookup key. */
  update(id: string, patch: SessionPatch): void {
    const keys = (Object.keys(patch) as (keyof SessionPatch)[]).filter((k) => patch[k] !== undefined);
    if (keys.length === 0) return;
    this.#pages.clear();
    transaction(this.#db, () => {
      const sets = keys.map((k) => `${COLUMNS[k]} = ?`).join(', ');
      const values = keys.map((k) => toColumnValue(k, patch[k]));
      this.#sql(`UPDATE coding_sessions SET ${sets} WHERE id = ?`).run(...values, id);
      if (patch.backendSessionId) this.#setKey(patch.backendSessionId, id, 'backend');
    });
  }

  #setKey(key: string, sessionId: string, kind: 'id' | 'name' | 'backend'): void {
    // A key an older session holds (a name reused after eviction, a backend id resumed by a new session) moves to the newer one;
    // an id key is never taken from its own session.
    this.#sql(
        `INSERT INTO session_keys (key, session_id, kind) VALUES (?, ?, ?)
         ON CONFLICT(key) DO UPDATE SET session_id = excluded.session_id, kind = excluded.kind WHERE session_keys.kind != 'id'`,
      )
      .run(key, sessionId, kind);
  }

  /** Returns the session with this internal id, or null. */
  get(id: string): StoredSession | null {
    const row = this.#sql('SELECT * FROM coding_sessions WHERE id = ?').get(id) as Row | undefined;
    return row ? fromRow(row) : null;
  }

  /** Finds a session by internal id, name or backend session id. */
  resolve(ref: string): StoredSession | null {
    const row = this.#sql('SELECT s.* FROM session_keys k JOIN coding_sessions s ON s.id = k.session_id WHERE k.key = ?').get(ref) as
      | Row
      | undefined;
    return row ? fromRow(row) : null;
  }

  /** True when a stored session already uses `name`. */
  nameTaken(name: string): boolean {
    return this.#sql('SELECT 1 FROM coding_sessions WHERE name = ?').get(name) !== undefined;
  }

  /** Lists sessions, newest first, optionally only those with the given statuses. */
  list(statuses?: readonly SessionStatus[]): StoredSession[] {
    const rows =
      statuses && statuses.length > 0
        ? (this.#sql(`SELECT * FROM coding_sessions WHERE status IN (${statuses.map(() => '?').join(',')}) ORDER BY started_at DESC, rowid DESC`)
            .all(...statuses) as unknown as Row[])
        : (this.#sql('SELECT * FROM coding_sessions ORDER BY started_at DESC, rowid DESC').all() as unknown as Row[]);
    return rows.map(fromRow);
  }

  /**
   * One page of the session list, newest first (by start time, then insertion order), optionally only those with the
   * given statuses, starting after the sort key `after` of the previous page's last session. Uses the start-time
   * indexes, so a page costs the same whatever the number of stored sessions. Every write here drops the pages read
   * so far; until then, asking again for a page answers the page already read (a list polled by the web page, the CLI
   * or a script reads SQLite once per change, not once per call).
   */
  page(options: { statuses?: readonly SessionStatus[]; limit: number; after?: CursorKey }): SessionListingPage {
    const { statuses = [], limit, after } = options;
    const params: (string | number)[] = [...statuses];
    if (after) params.push(after[0], Number(after[1]));
    const sql = listingPageSql(statuses.length, after !== undefined);
    const cacheKey = `${sql}\n${params.join('\n')}\n${limit}`;
    const cached = this.#pages.get(cacheKey);
    if (cached) return cached;
    const statement = this.#sql(sql);
    statement.setReturnArrays(true);
    const rows = statement.all(...params, limit + 1) as unknown as ListingRow[];
    const more = rows.length > limit;
    if (more) rows.length = limit;
    const last = rows.at(-1);
    const page: SessionListingPage = { sessions: rows.map(listingFromRow), next: more && last ? [last[11], last[0]] : null };
    if (this.#pages.size >= PAGE_CACHE_SIZE) this.#pages.clear();
    this.#pages.set(cacheKey, page);
    return page;
  }

  /** Deletes a session and its lookup keys. */
  delete(id: string): void {
    this.#pages.clear();
    this.#sql('DELETE FROM coding_sessions WHERE id = ?').run(id);
  }

  /** Returns ids of the oldest non-active sessions beyond the newest `keep`; the caller deletes them and their logs. */
  evictionCandidates(keep: number): string[] {
    const rows = this.#sql(
        `SELECT id FROM coding_sessions WHERE status NOT IN ('starting', 'running')
         ORDER BY COALESCE(completed_at, updated_at) DESC, rowid DESC LIMIT -1 OFFSET ?`,
      )
      .all(keep) as { id: string }[];
    return rows.map((r) => r.id);
  }

  /** Records the start of a run (a launch or a resume); returns the run id. */
  startRun(session: StoredSession, kind: 'launch' | 'resume', at: number): number {
    const result = this.#sql(
        `INSERT INTO session_runs (session_id, name, prompt, harness, kind, status, started_at) VALUES (?, ?, ?, ?, ?, 'running', ?)`,
      )
      .run(session.id, session.name, session.prompt, session.harness, kind, at);
    return Number(result.lastInsertRowid);
  }

  /** Records how a run ended: once per run, with the cost it added. */
  endRun(runId: number, status: SessionStatus, costUsd: number, endedAt: number): void {
    this.#sql(
        `UPDATE session_runs SET status = ?, cost_usd = ?, ended_at = ?, duration_ms = ? - started_at WHERE id = ? AND ended_at IS NULL`,
      )
      .run(status, costUsd, endedAt, endedAt, runId);
  }

  /** Records what an open run has cost so far (after each turn), so stats count running sessions and crash-cut runs. */
  setRunCost(runId: number, costUsd: number): void {
    this.#sql('UPDATE session_runs SET cost_usd = ? WHERE id = ? AND ended_at IS NULL').run(costUsd, runId);
  }

  /** Runs left open by a crash are closed as interrupted at `at` (keeping the cost recorded so far). Returns how many. */
  closeOpenRuns(at: number): number {
    const result = this.#sql(`UPDATE session_runs SET status = 'interrupted', ended_at = ?, duration_ms = ? - started_at WHERE ended_at IS NULL`)
      .run(at, at);
    return Number(result.changes);
  }

  /**
   * Aggregates cost, status counts, duration and the most expensive session over all runs. Cost counts what running
   * runs have spent so far (a running run's day is its start day); durations count finished runs. Dollar amounts are
   * rounded to 1e-6.
   */
  metrics(): SessionMetrics {
    const totals = this.#sql(
        `SELECT COALESCE(SUM(cost_usd), 0) AS cost,
                (SELECT COALESCE(AVG(duration_ms), 0) FROM session_runs WHERE ended_at IS NOT NULL) AS avg,
                (SELECT COUNT(*) FROM session_runs WHERE kind = 'launch') AS launched
         FROM session_runs`,
      )
      .get() as { cost: number; avg: number; launched: number };
    const perDay = this.#sql(
        `SELECT strftime('%Y-%m-%d', COALESCE(ended_at, started_at) / 1000, 'unixepoch') AS day, SUM(cost_usd) AS cost
         FROM session_runs GROUP BY day HAVING cost > 0 OR MAX(ended_at) IS NOT NULL ORDER BY day`,
      )
      .all() as { day: string; cost: number }[];
    const byStatus = this.#sql('SELECT status, COUNT(*) AS n FROM session_runs GROUP BY status').all() as {
      status: string;
      n: number;
    }[];
    const top = this.#sql(
        `SELECT session_id, name, prompt, SUM(cost_usd) AS cost FROM session_runs GROUP BY session_id
         HAVING cost > 0 ORDER BY cost DESC LIMIT 1`,
      )
      .get() as { session_id: string; name: string; prompt: string; cost: number } | undefined;
    const sessionsByStatus = { completed: 0, failed: 0, killed: 0, interrupted: 0, running: 0 };
    for (const { status, n } of byStatus) {
      if (status in sessionsByStatus) sessionsByStatus[status as keyof typeof sessionsByStatus] = n;
    }
    return {
      totalCostUsd: roundUsd(totals.cost),
      costPerDay: Object.fromEntries(perDay.map((d) => [d.day, roundUsd(d.cost)])),
      sessionsByStatus,
      totalLaunched: totals.launched,
      averageDurationMs: Math.round(totals.avg),
      mostExpensive: top ? { id: top.session_id, name: top.name, costUsd: roundUsd(top.cost), prompt: top.prompt.slice(0, 80) } : null,
    };
  }
}
