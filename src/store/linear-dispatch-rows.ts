// The row mapping of the dispatch tables: a `linear_dispatches` or `linear_dispatch_sessions` row as the domain sees
// it, the columns a patch sets, and the two pieces of SQL the dispatch statements share (the back of the queue, the
// arrival order).
import type { ExpressionBuilder, Selectable, SelectQueryBuilder, Updateable } from 'kysely';
import type { DispatchContextData, DispatchPatch, DispatchRecord, DispatchSession } from './linear-dispatch-types.ts';
import type { Database } from './tables/index.ts';

type DispatchTable = Database['linear_dispatches'];
type DispatchRow = Selectable<DispatchTable>;
type SessionRow = Selectable<Database['linear_dispatch_sessions']>;

/** A dispatch row as the domain sees it. */
export function dispatchOf(row: DispatchRow): DispatchRecord {
  return {
    id: row.id,
    issueId: row.issue_id,
    identifier: row.identifier,
    title: row.title,
    agentSessionId: row.agent_session_id,
    status: row.status,
    attempt: row.attempt,
    roundStart: row.round_start,
    tier: row.tier,
    tierReason: row.tier_reason,
    harness: row.harness,
    model: row.model,
    auditHarness: row.audit_harness,
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
    node: row.node,
  };
}

/** A dispatch-session row as the domain sees it. */
export function sessionOf(row: SessionRow): DispatchSession {
  return {
    seq: row.seq,
    sessionId: row.session_id,
    dispatchId: row.dispatch_id,
    phase: row.phase,
    attempt: row.attempt,
    try: row.try,
    endCause: row.end_cause,
    startedAt: row.started_at,
    endedAt: row.ended_at,
  };
}

/** The columns a patch sets (a nullable field given as null or undefined is cleared). */
export function patchColumns(patch: DispatchPatch): Updateable<DispatchTable> {
  const columns: Updateable<DispatchTable> = {};
  if (patch.attempt !== undefined) columns.attempt = patch.attempt;
  if (patch.roundStart !== undefined) columns.round_start = patch.roundStart;
  if ('lastError' in patch) columns.last_error = patch.lastError ?? null;
  if (patch.stopRequested !== undefined) columns.stop_requested = patch.stopRequested ? 1 : 0;
  if ('worktreePath' in patch) columns.worktree_path = patch.worktreePath ?? null;
  if (patch.context !== undefined) columns.context = JSON.stringify(patch.context);
  if ('agentSessionId' in patch) columns.agent_session_id = patch.agentSessionId ?? null;
  if (patch.lastActivityAt !== undefined) columns.last_activity_at = patch.lastActivityAt;
  return columns;
}

/**
 * The back of the queue: one past the highest queue seq given so far (a subquery of the statement it is used in). Given
 * at insert too, so among dispatches created in the same millisecond it is their arrival order (the lists' tie-break,
 * where SQLite's rowid was: PostgreSQL has none).
 */
export function nextQueueSeq(eb: ExpressionBuilder<Database, 'linear_dispatches'>) {
  return eb
    .selectFrom('linear_dispatches')
    .select((sub) => sub(sub.fn.coalesce(sub.fn.max('queue_seq'), sub.lit(0)), '+', sub.lit(1)).as('next'));
}

/** A SELECT of whole dispatch rows. */
export type DispatchSelect = SelectQueryBuilder<
  Database,
  'linear_dispatches',
  Selectable<Database['linear_dispatches']>
>;

/**
 * `qb` in the dispatches' arrival order: creation time, then queue seq (one past the highest at insert, so it keeps
 * insertion order within one millisecond), then id; `desc` for newest first.
 */
export function byArrival(qb: DispatchSelect, direction: 'asc' | 'desc' = 'asc'): DispatchSelect {
  return qb.orderBy('created_at', direction).orderBy('queue_seq', direction).orderBy('id', direction);
}
