// What the phases of a dispatch are handed (PhaseDeps: the dispatch store and only the calls they make on the
// pipeline's parts), and the two ends any phase may reach: a dispatch marked stuck, and a finished dispatch's release.
import type { SessionManager } from '../../coding/session-manager.ts';
import type { Clock } from '../../core/clock.ts';
import type { LinearPipelineConfig } from '../../core/config-linear-pipeline.ts';
import type { KeyedSerial } from '../../core/keyed-serial.ts';
import type { Logger } from '../../core/logger.ts';
import type { DispatchRecord } from '../../store/linear-dispatch-types.ts';
import type { DispatchStore } from '../../store/linear-dispatches.ts';
import type { LinearApi } from '../api/types.ts';
import type { LinearApprovals } from '../approvals-bridge.ts';
import type { DeliveryDeps } from './deliver.ts';
import type { DispatchJournal } from './dispatch-journal.ts';
import type { DispatchLanes } from './dispatch-lanes.ts';
import type { DispatchReporter } from './dispatch-reporter.ts';
import { transitionDispatch } from './dispatch-transitions.ts';
import type { SessionWatch } from './session-watch.ts';
import type { PipelineSlots } from './slots.ts';

/** What the phases use: the dispatch store and the parts of the pipeline, each narrowed to the calls made here. */
export interface PhaseDeps {
  store: DispatchStore;
  clock: Clock;
  logger: Logger;
  pc: LinearPipelineConfig;
  linear: Pick<LinearApi, 'getIssue' | 'teamStates' | 'updateIssue'>;
  sessions: Pick<SessionManager, 'launch' | 'get' | 'outputBlocks'>;
  lanes: Pick<DispatchLanes, 'serial'>;
  /**
   * Serializes the worktree changes of each repository (keyed by its path): git cannot add two worktrees to one
   * repository at once (the second reads the first's half-written entry and fails).
   */
  repositories: Pick<KeyedSerial<string>, 'run'>;
  reporter: Pick<
    DispatchReporter,
    'thought' | 'tell' | 'tellOnce' | 'tellStuck' | 'notifyDone' | 'linkSession' | 'close'
  >;
  journal: Pick<DispatchJournal, 'artifacts' | 'record' | 'close'>;
  watch: Pick<SessionWatch, 'watch' | 'unwatch' | 'touch' | 'tripOf'>;
  slots: Pick<PipelineSlots, 'waitForSession' | 'stopWaiting' | 'dispatchSlotFreed'>;
  /** Workers' approvals in Linear (when the daemon has an ApprovalDesk). */
  approvals?: Pick<LinearApprovals, 'workerStarted'> | null;
  /** Set when a passed audit ends in a pull request (`onPass: pull-request` with GitHub); null: the issue is done. */
  delivery?: DeliveryDeps | null;
}

/** Sends what is buffered for a finished dispatch, closes its artifacts, and gives its dispatch slot back. */
export async function releaseDispatch(
  p: Pick<PhaseDeps, 'reporter' | 'journal' | 'slots'>,
  dispatchId: string,
): Promise<void> {
  await p.reporter.close(dispatchId);
  await p.journal.close(dispatchId);
  await p.slots.dispatchSlotFreed();
}

/** Moves a dispatch to `stuck` (from whatever active status it is in) and tells the user. */
export async function markStuck(p: PhaseDeps, d: DispatchRecord, reason: string): Promise<void> {
  const next = await transitionDispatch(p.store, d.id, d.status, 'stuck', p.clock.now(), {
    attempt: d.attempt,
    patch: { lastError: reason },
  });
  if (!next) return;
  await p.reporter.tellStuck(next, reason);
  await releaseDispatch(p, d.id);
}
