// The dispatch state machine: which status may move to which. The store only runs the compare-and-swap it is handed;
// this file decides whether the move is one the pipeline may make at all.
import type { DispatchPatch, DispatchRecord, DispatchStatus } from '../../store/linear-dispatch-types.ts';
import type { DispatchStore } from '../../store/linear-dispatches.ts';

/** Every allowed edge of the dispatch state machine; `transitionDispatch` refuses any other. */
export const DISPATCH_TRANSITIONS: Readonly<Record<DispatchStatus, readonly DispatchStatus[]>> = {
  queued: ['dispatched', 'stopped'],
  dispatched: ['working', 'stuck', 'stopped'],
  working: ['auditing', 'stuck', 'stopped'],
  auditing: ['done', 'working', 'stuck', 'stopped'],
  done: ['queued'],
  stuck: ['queued'],
  stopped: ['queued'],
};

/** Throws for an edge (from any of `from` to `to`) the state machine does not have. */
export function assertDispatchEdge(from: DispatchStatus | readonly DispatchStatus[], to: DispatchStatus): void {
  const froms: readonly DispatchStatus[] = typeof from === 'string' ? [from] : from;
  for (const f of froms) {
    if (!DISPATCH_TRANSITIONS[f].includes(to)) throw new Error(`dispatch transition ${f} → ${to} is not allowed`);
  }
}

/**
 * Moves a dispatch from one of `from` to `to` along an allowed edge (throws for any other), as the store's one
 * compare-and-swap on the status (and the attempt, when given). Resolves to the new record, or null when the row was
 * not in an expected state (another caller won).
 */
export async function transitionDispatch(
  store: Pick<DispatchStore, 'compareAndSwap'>,
  id: string,
  from: DispatchStatus | readonly DispatchStatus[],
  to: DispatchStatus,
  now: number,
  options: { attempt?: number; patch?: DispatchPatch } = {},
): Promise<DispatchRecord | null> {
  assertDispatchEdge(from, to);
  return store.compareAndSwap(id, from, to, now, options);
}
