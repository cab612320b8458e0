// Durable state of the project planner: one planning session per project at a time, its interview history and the
// compare-and-swap that moves its status (which moves are allowed is the planner's rule: planner/planning-transitions.ts).
import type { Kysely, Selectable, Updateable } from 'kysely';
import type { Database } from './tables/index.ts';

export const PLANNING_STATUSES = ['interviewing', 'plan_review', 'approved', 'abandoned'] as const;
export type PlanningStatus = (typeof PLANNING_STATUSES)[number];

/** Statuses of a planning session in progress: at most one per project; its issues are not dispatched meanwhile. */
export const ACTIVE_PLANNING_STATUSES: readonly PlanningStatus[] = ['interviewing', 'plan_review'];

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

export type NewPlanningSession = Pick<
  PlanningSession,
  'id' | 'projectId' | 'projectName' | 'issueId' | 'issueIdentifier' | 'teamId' | 'agentSessionId' | 'createdBy'
>;

export type PlanningPatch = Partial<
  Pick<PlanningSession, 'turnCount' | 'issuesCreated' | 'history' | 'lastAudit' | 'agentSessionId'>
>;

type PlanningTable = Database['linear_planning'];

/** A planning row as the domain sees it. */
function planningOf(row: Selectable<PlanningTable>): PlanningSession {
  return {
    id: row.id,
    projectId: row.project_id,
    projectName: row.project_name,
    issueId: row.issue_id,
    issueIdentifier: row.issue_identifier,
    teamId: row.team_id,
    status: row.status,
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

/** The columns a patch sets (fields left undefined are not touched; null clears a nullable one). */
function patchColumns(patch: PlanningPatch): Updateable<PlanningTable> {
  const columns: Updateable<PlanningTable> = {};
  if (patch.turnCount !== undefined) columns.turn_count = patch.turnCount;
  if (patch.issuesCreated !== undefined) columns.issues_created = patch.issuesCreated;
  if (patch.history !== undefined) columns.history = JSON.stringify(patch.history);
  if (patch.lastAudit !== undefined)
    columns.last_audit = patch.lastAudit === null ? null : JSON.stringify(patch.lastAudit);
  if (patch.agentSessionId !== undefined) columns.agent_session_id = patch.agentSessionId;
  return columns;
}

/** Planning sessions (migration 460). */
export class PlanningStore {
  #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /**
   * Starts a session in `interviewing`. Resolves to it with `created: true`, or to the project's session already in
   * progress with `created: false` (one per project, enforced by a unique index).
   */
  async create(input: NewPlanningSession, now: number): Promise<{ session: PlanningSession; created: boolean }> {
    const row = await this.#db
      .insertInto('linear_planning')
      .values({
        id: input.id,
        project_id: input.projectId,
        project_name: input.projectName,
        issue_id: input.issueId,
        issue_identifier: input.issueIdentifier,
        team_id: input.teamId,
        status: 'interviewing',
        agent_session_id: input.agentSessionId,
        created_by: input.createdBy,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) => oc.doNothing())
      .returningAll()
      .executeTakeFirst();
    if (row) return { session: planningOf(row), created: true };
    const active = await this.activeForProject(input.projectId);
    if (!active) throw new Error(`planning session ${input.id} could not be created`);
    return { session: active, created: false };
  }

  /** A planning session by id. */
  async get(id: string): Promise<PlanningSession | null> {
    const row = await this.#db.selectFrom('linear_planning').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? planningOf(row) : null;
  }

  /** The session in progress for a project, if any. */
  async activeForProject(projectId: string): Promise<PlanningSession | null> {
    const row = await this.#db
      .selectFrom('linear_planning')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('status', 'in', ACTIVE_PLANNING_STATUSES)
      .executeTakeFirst();
    return row ? planningOf(row) : null;
  }

  /** The session in progress whose planning issue is `issueId`, if any. */
  async activeForIssue(issueId: string): Promise<PlanningSession | null> {
    const row = await this.#db
      .selectFrom('linear_planning')
      .selectAll()
      .where('issue_id', '=', issueId)
      .where('status', 'in', ACTIVE_PLANNING_STATUSES)
      .executeTakeFirst();
    return row ? planningOf(row) : null;
  }

  /** The newest session (any status) reporting to an agent session (ties by id). */
  async forAgentSession(agentSessionId: string): Promise<PlanningSession | null> {
    const row = await this.#db
      .selectFrom('linear_planning')
      .selectAll()
      .where('agent_session_id', '=', agentSessionId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? planningOf(row) : null;
  }

  /** Every session, oldest first. */
  async list(): Promise<PlanningSession[]> {
    const rows = await this.#db.selectFrom('linear_planning').selectAll().orderBy('created_at').orderBy('id').execute();
    return rows.map(planningOf);
  }

  /**
   * Compare-and-swap: moves the session from `from` to `to` with `patch`; resolves to the updated session, or null
   * when it is no longer in `from`. The edge itself is the caller's to check (transitionPlanning).
   */
  async compareAndSwap(
    id: string,
    from: PlanningStatus,
    to: PlanningStatus,
    now: number,
    patch: PlanningPatch = {},
  ): Promise<PlanningSession | null> {
    const row = await this.#db
      .updateTable('linear_planning')
      .set({ status: to, updated_at: now, ...patchColumns(patch) })
      .where('id', '=', id)
      .where('status', '=', from)
      .returningAll()
      .executeTakeFirst();
    return row ? planningOf(row) : null;
  }

  /** Updates fields without changing the status; resolves to the session or null when unknown. */
  async update(id: string, patch: PlanningPatch, now: number): Promise<PlanningSession | null> {
    const row = await this.#db
      .updateTable('linear_planning')
      .set({ updated_at: now, ...patchColumns(patch) })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    return row ? planningOf(row) : null;
  }
}
