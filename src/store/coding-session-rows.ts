// How a coding_sessions row and a stored session map to each other: a row read back as a StoredSession, the columns a
// patch changes, and a new session's row in the one fixed order its insert is built in.
import type { Insertable, Selectable, Updateable } from 'kysely';
import { listingFromRow } from './coding-session-listings.ts';
import type { ChannelView, LaunchSpec, Placement, SessionPatch, StoredSession } from './coding-session-types.ts';
import type { Database } from './tables/index.ts';

/** A coding_sessions row as the database returns it. */
type SessionRow = Selectable<Database['coding_sessions']>;
/** A coding_sessions row as an insert takes it. */
export type InsertableSessionRow = Insertable<Database['coding_sessions']>;

/** The stored session of a row (the one place a row becomes a StoredSession). */
export function sessionFromRow(row: SessionRow): StoredSession {
  const spec = JSON.parse(row.spec) as LaunchSpec;
  return {
    ...listingFromRow(row, spec.multiTurn, JSON.parse(row.foreground) as Record<string, ChannelView>),
    spec,
    originSessionId: row.origin_session_id,
    updatedAt: row.updated_at,
    autoResponds: row.auto_responds,
    pid: row.pid,
  };
}

/** The columns a patch changes (fields left undefined stay as they are; Kysely leaves undefined values out). */
export function patchColumns(patch: SessionPatch): Updateable<Database['coding_sessions']> {
  return {
    status: patch.status,
    prompt: patch.prompt,
    workdir: patch.workdir,
    model: patch.model,
    backend_session_id: patch.backendSessionId,
    origin_channel: patch.originChannel,
    origin_session_id: patch.originSessionId,
    spec: patch.spec === undefined ? undefined : JSON.stringify(patch.spec),
    cost_usd: patch.costUsd,
    completed_at: patch.completedAt,
    updated_at: patch.updatedAt,
    error: patch.error,
    end_reason: patch.endReason,
    budget_exhausted: patch.budgetExhausted === undefined ? undefined : Number(patch.budgetExhausted),
    foreground: patch.foreground === undefined ? undefined : JSON.stringify(patch.foreground),
    auto_responds: patch.autoResponds,
    resumed_from: patch.resumedFrom,
    forked: patch.forked === undefined ? undefined : Number(patch.forked),
    pid: patch.pid,
    node: patch.node,
  };
}

/** A new session's row as (column, value) pairs in one fixed order, for the insert built once per shape. */
export function sessionRowValues(
  session: StoredSession,
  placement?: Placement,
): [keyof InsertableSessionRow, unknown][] {
  return [
    ['id', session.id],
    ['name', session.name],
    ['harness', session.harness],
    ['status', session.status],
    ['prompt', session.prompt],
    ['workdir', session.workdir],
    ['model', session.model],
    ['backend_session_id', session.backendSessionId],
    ['origin_channel', session.originChannel],
    ['origin_session_id', session.originSessionId],
    ['spec', JSON.stringify(session.spec)],
    ['cost_usd', session.costUsd],
    ['started_at', session.startedAt],
    ['completed_at', session.completedAt],
    ['updated_at', session.updatedAt],
    ['error', session.error],
    ['end_reason', session.endReason],
    ['budget_exhausted', Number(session.budgetExhausted)],
    ['foreground', JSON.stringify(session.foreground)],
    ['auto_responds', session.autoResponds],
    ['resumed_from', session.resumedFrom],
    ['forked', Number(session.forked)],
    ['pid', session.pid],
    ['node', session.node],
    ['place_on', placement?.on ?? null],
    ['place_labels', placement?.labels && placement.labels.length > 0 ? JSON.stringify(placement.labels) : null],
  ];
}
