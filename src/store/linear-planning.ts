// Durable state of the project planner: one planning session per project at a time, its interview history and the
// compare-and-swap transitions of its state machine (interviewing → plan_review → approved | interviewing; abandoned).
import type { DatabaseSync } from 'node:sqlite';

export const PLANNING_STATUSES = ['interviewing', 'plan_review', 'approved', 'abandoned'] as const;
export type PlanningStatus = (typeof PLANNING_STATUSES)[number];

/** Statuses of a planning session in progress: at most one per project; its issues are not dispatched meanwhile. */
export const ACTIVE_PLANNING_STATUSES: readonly PlanningStatus[] = ['interviewing', 'plan_review'];

/** Every allowed edge; `transition` refuses any other. */
export const PLANNING_TRANSITIONS: Readonly<Record<PlanningStatus, readonly PlanningStatus[]>> = {
  interviewing: ['plan_review', 'abandoned'],
  plan_review: ['approved', 'interviewing'],
  approved: [],
  abandoned: [],
};

/** One message of the interview as the model sees it again next turn. */
export interface PlanningMessage {
  role: 'user' | 'assistant';
  content: string;
}

export interface PlanningSession {
  id: string;
  projectId: string;
  projectName: string;
  /** The issue the planning was started on; its comments are the interview. */
  issueId: string;
  issueIdentifier: string;
  teamId: string;
  status: PlanningStatus;
  /** The Linear agent session the planning reports to, when it was started from one. */
  agentSessionId: string | null;
  turnCount: number;
  issuesCreated: number;
  history: PlanningMessage[];
  /** Findings of the last audit (empty when it passed or never ran). */
  lastAudit: string[] | null;
  createdBy: string | null;
  createdAt: number;
  updatedAt: number;
}

export type NewPlanningSession = Pick<PlanningSession, 'id' | 'projectId' | 'projectName' | 'issueId' | 'issueIdentifier' | 'teamId' | 'agentSessionId' | 'createdBy'>;

export type PlanningPatch = Partial<Pick<PlanningSession, 'turnCount' | 'issuesCreated' | 'history' | 'lastAudit' | 'agentSessionId'>>;

interface Row {
  id: string;
  project_id: string;
  project_name: string;
  issue_id: string;
  issue_identifier: string;
  team_id: string;
  status: string;
  agent_session_id: string | null;
  turn_count: number;
  issues_created: number;
  history: string;
  last_audit: string | null;
  created_by: string | null;
  created_at: number;
  updated_at: number;
}

function fromRow(row: Row): PlanningSession {
  return {
    id: row.id,
    projectId: row.project_id,
    projectName: row.project_name,
    issueId: row.issue_id,
    issueIdentifier: row.issue_identifier,
    teamId: row.team_id,
    status: row.status as PlanningStatus,
    agentSessionId: row.agent_session_id,
    turnCount: row.turn_count,
    issuesCreated: row.issues_created,
    history: JSON.parse(row.history) as PlanningMessage[],
    lastAudit: row.last_audit === null ? null : (JSON.parse(row.last_audit) as string[]),
    createdBy: row.created_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

const PATCH_COLUMNS: Record<keyof PlanningPatch, string> = {
  turnCount: 'turn_count',
  issuesCreated: 'issues_created',
  history: 'history',
  lastAudit: 'last_audit',
  agentSessionId: 'agent_session_id',
};

function patchValue(key: keyof PlanningPatch, value: unknown): string | number | null {
  if (value === undefined || value === null) return null;
  if (key === 'history' || key === 'lastAudit') return JSON.stringify(value);
  return value as string | number;
}

const ACTIVE_SQL = `status IN (${ACTIVE_PLANNING_STATUSES.map((s) => `'${s}'`).join(', ')})`;

/** Planning sessions (migration 460). */
export class PlanningStore {
  #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /**
   * Starts a session in `interviewing`. Returns it with `created: true`, or the project's session already in progress
   * with `created: false` (one per project, enforced by a unique index).
   */
  create(input: NewPlanningSession, now: number): { session: PlanningSession; created: boolean } {
    const result = this.#db
      .prepare(
        `INSERT OR IGNORE INTO linear_planning (id, project_id, project_name, issue_id, issue_identifier, team_id, status, agent_session_id, created_by, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, 'interviewing', ?, ?, ?, ?)`,
      )
      .run(input.id, input.projectId, input.projectName, input.issueId, input.issueIdentifier, input.teamId, input.agentSessionId, input.createdBy, now, now);
    if (result.changes > 0) return { session: this.get(input.id) as PlanningSession, created: true };
    const active = this.activeForProject(input.projectId);
    if (!active) throw new Error(`planning session ${input.id} could not be created`);
    return { session: active, created: false };
  }

  get(id: string): PlanningSession | null {
    const row = this.#db.prepare('SELECT * FROM linear_planning WHERE id = ?').get(id) as Row | undefined;
    return row ? fromRow(row) : null;
  }

  /** The session in progress for a project, if any. */
  activeForProject(projectId: string): PlanningSession | null {
    const row = this.#db.prepare(`SELECT * FROM linear_planning WHERE project_id = ? AND ${ACTIVE_SQL}`).get(projectId) as Row | undefined;
    return row ? fromRow(row) : null;
  }

  /** The session in progress whose planning issue is `issueId`, if any. */
  activeForIssue(issueId: string): PlanningSession | null {
    const row = this.#db.prepare(`SELECT * FROM linear_planning WHERE issue_id = ? AND ${ACTIVE_SQL}`).get(issueId) as Row | undefined;
    return row ? fromRow(row) : null;
  }

  /** The newest session (any status) reporting to an agent session. */
  forAgentSession(agentSessionId: string): PlanningSession | null {
    const row = this.#db.prepare('SELECT * FROM linear_planning WHERE agent_session_id = ? ORDER BY created_at DESC LIMIT 1').get(agentSessionId) as Row | undefined;
    return row ? fromRow(row) : null;
  }

  /** Every session, oldest first. */
  list(): PlanningSession[] {
    return (this.#db.prepare('SELECT * FROM linear_planning ORDER BY created_at, id').all() as unknown as Row[]).map(fromRow);
  }

  /**
   * Compare-and-swap: moves the session from `from` to `to` (an allowed edge) with `patch`; returns the updated
   * session, or null when it is no longer in `from`. Throws on an edge the state machine does not have.
   */
  transition(id: string, from: PlanningStatus, to: PlanningStatus, now: number, patch: PlanningPatch = {}): PlanningSession | null {
    if (!PLANNING_TRANSITIONS[from].includes(to)) throw new Error(`planning: no transition from ${from} to ${to}`);
    const { sets, values } = this.#patch(patch);
    const result = this.#db
      .prepare(`UPDATE linear_planning SET status = ?, updated_at = ?${sets} WHERE id = ? AND status = ?`)
      .run(to, now, ...values, id, from);
    return result.changes > 0 ? this.get(id) : null;
  }

  /** Updates fields without changing the status; returns the session or null when unknown. */
  update(id: string, patch: PlanningPatch, now: number): PlanningSession | null {
    const { sets, values } = this.#patch(patch);
    this.#db.prepare(`UPDATE linear_planning SET updated_at = ?${sets} WHERE id = ?`).run(now, ...values, id);
    return this.get(id);
  }

  #patch(patch: PlanningPatch): { sets: string; values: (string | number | null)[] } {
    const keys = (Object.keys(patch) as (keyof PlanningPatch)[]).filter((k) => patch[k] !== undefined);
    return { sets: keys.map((k) => `, ${PATCH_COLUMNS[k]} = ?`).join(''), values: keys.map((k) => patchValue(k, patch[k])) };
  }
}
