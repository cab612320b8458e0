// The planning state machine: interviewing → plan_review → approved | interviewing; interviewing → abandoned. The
// store only runs the compare-and-swap it is handed; this file decides whether the move is allowed at all.
import type { PlanningPatch, PlanningSession, PlanningStatus, PlanningStore } from '../../store/linear-planning.ts';

/** Every allowed edge of the planning state machine; `transitionPlanning` refuses any other. */
export const PLANNING_TRANSITIONS: Readonly<Record<PlanningStatus, readonly PlanningStatus[]>> = {
  interviewing: ['plan_review', 'abandoned'],
  plan_review: ['approved', 'interviewing'],
  approved: [],
  abandoned: [],
};

/** Throws for an edge the planning state machine does not have. */
export function assertPlanningEdge(from: PlanningStatus, to: PlanningStatus): void {
  if (!PLANNING_TRANSITIONS[from].includes(to)) throw new Error(`planning: no transition from ${from} to ${to}`);
}

/**
 * Moves a planning session from `from` to `to` along an allowed edge (throws for any other) with `patch`, as the
 * store's one compare-and-swap. Resolves to the updated session, or null when it is no longer in `from`.
 */
export async function transitionPlanning(
  store: Pick<PlanningStore, 'compareAndSwap'>,
  id: string,
  from: PlanningStatus,
  to: PlanningStatus,
  now: number,
  patch: PlanningPatch = {},
): Promise<PlanningSession | null> {
  assertPlanningEdge(from, to);
  return store.compareAndSwap(id, from, to, now, patch);
}
