// What the pipeline does with the coding sessions' signals: the end of a dispatch's worker or auditor moves the
// dispatch on (in its lane), a freed coding-session slot retries the dispatches waiting for one (and, in a cluster,
// looks for work), and an auditor asking for a permission is told no (it is read-only).
import type { SessionSignal } from '../../coding/session.ts';
import type { SessionManager } from '../../coding/session-manager.ts';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { DispatchStore } from '../../store/linear-dispatches.ts';
import type { DispatchLanes } from './dispatch-lanes.ts';
import type { InFlight } from './in-flight.ts';
import { AUDITOR_DENIAL } from './phases.ts';
import type { PipelineSlots } from './slots.ts';

/** What the signal handling is built from. */
export interface SessionSignalsDeps {
  /** The full dispatch store (which dispatch a session belongs to). */
  store: Pick<DispatchStore, 'session'>;
  lanes: Pick<DispatchLanes, 'serial'>;
  slots: Pick<PipelineSlots, 'waitingForSession'>;
  sessions: Pick<SessionManager, 'send'>;
  /** Where the handling of a signal runs (outside the lanes, covered by the pipeline's `idle()`). */
  inFlight: Pick<InFlight, 'run'>;
  logger: Logger;
  /** What follows the end of a dispatch's session (its end claimed: only the first caller acts); run in its lane. */
  sessionEnded: (sessionId: string) => Promise<void>;
  /** Brings a dispatch waiting for a coding-session slot back on track; run in its lane. */
  retry: (dispatchId: string) => Promise<void>;
  /** In a cluster: a coding-session slot of this node is free (look for dispatches to claim); null on a node alone. */
  sessionSlotFreed: (() => void) | null;
}

/** Handles the SessionManager's signals for the pipeline. */
export class SessionSignals {
  readonly #d: SessionSignalsDeps;

  constructor(deps: SessionSignalsDeps) {
    this.#d = deps;
  }

  /** The listener to hand `SessionManager.on`: handles the signal in the background; a failure is logged. */
  onSignal(signal: SessionSignal): void {
    this.#d.inFlight.run(
      () => this.#handle(signal),
      (error) =>
        this.#d.logger.error(
          { err: errorMessage(error), session: signal.session.id, signal: signal.type },
          'pipeline could not handle a session signal',
        ),
    );
  }

  async #handle(signal: SessionSignal): Promise<void> {
    const { store, lanes, slots, sessions, logger } = this.#d;
    if (signal.type === 'ended') {
      const row = await store.session(signal.session.id);
      if (row) void lanes.serial(row.dispatchId, 'session-end', () => this.#d.sessionEnded(signal.session.id));
      for (const id of slots.waitingForSession()) void lanes.serial(id, 'slot', () => this.#d.retry(id));
      // A coding-session slot of this node is free: a queued dispatch may start here.
      this.#d.sessionSlotFreed?.();
      return;
    }
    if (signal.type === 'waiting' && signal.reason === 'permission') {
      const row = await store.session(signal.session.id);
      if (row?.phase !== 'audit') return;
      sessions.send(signal.session.id, AUDITOR_DENIAL, { source: 'agent' }).catch((error: unknown) => {
        logger.warn(
          { err: errorMessage(error), session: signal.session.id },
          'could not deny an auditor permission request',
        );
      });
    }
  }
}
