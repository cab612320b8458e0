// A stop from Linear (the agent session's `stop` signal): the dispatch is marked `stopped` with its stop flag, the
// worker or auditor running here is killed (in a cluster the owner's claims pass kills one on another node, see
// node-claims.ts), and one response says so, once per stop signal whichever way it is answered.
import type { SessionManager } from '../../coding/session-manager.ts';
import type { Clock } from '../../core/clock.ts';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import { ACTIVE_DISPATCH_STATUSES } from '../../store/linear-dispatch-types.ts';
import type { DispatchStore } from '../../store/linear-dispatches.ts';
import type { DispatchJournal } from './dispatch-journal.ts';
import type { DispatchReporter } from './dispatch-reporter.ts';
import { transitionDispatch } from './dispatch-transitions.ts';
import type { SessionWatch } from './session-watch.ts';
import type { PipelineSlots } from './slots.ts';
import type { StopResult } from './types.ts';

/** What the stops are built from: the full dispatch store (not one node's view) and the calls made on the rest. */
export interface DispatchStopsDeps {
  store: Pick<DispatchStore, 'latestForAgentSession' | 'compareAndSwap' | 'currentSession' | 'setEndCause' | 'get'>;
  clock: Clock;
  logger: Logger;
  sessions: Pick<SessionManager, 'liveById' | 'kill'>;
  watch: Pick<SessionWatch, 'unwatch'>;
  slots: Pick<PipelineSlots, 'stopWaiting'>;
  reporter: Pick<DispatchReporter, 'tellOnce' | 'close'>;
  journal: Pick<DispatchJournal, 'record' | 'close'>;
  /** Starts queued dispatches while slots are free (the stopped dispatch's slot is free now). */
  pump: () => Promise<void>;
}

/** Takes in stops from Linear; see `onStop`. */
export class DispatchStops {
  readonly #d: DispatchStopsDeps;

  constructor(deps: DispatchStopsDeps) {
    this.#d = deps;
  }

  /**
   * A stop signal from Linear: the dispatch of that agent session is marked `stopped` (stop flag set), its running
   * worker or auditor is killed, and one response says so (under `<stopKey>/response`). A later prompt reopens it.
   */
  async onStop(agentSessionId: string, stopKey: string): Promise<StopResult> {
    const { store, clock, sessions, watch, reporter, journal, logger } = this.#d;
    const d = await store.latestForAgentSession(agentSessionId);
    if (!d) return { outcome: 'unknown' };
    // One answer per stop signal, whichever of these it is: a stop run again after a crash finds the dispatch stopped
    // and would say "nothing is running" — under the same key, so it is not said twice.
    const answer = `${stopKey}/response`;
    if (!ACTIVE_DISPATCH_STATUSES.includes(d.status)) {
      await reporter.tellOnce(
        d,
        { type: 'response', body: `Nothing is running for ${d.identifier}: it is ${d.status}.` },
        answer,
      );
      return { outcome: 'idle', dispatch: d };
    }
    const next = await transitionDispatch(store, d.id, d.status, 'stopped', clock.now(), {
      patch: { stopRequested: true },
    });
    if (!next) return this.onStop(agentSessionId, stopKey);
    const row = await store.currentSession(d.id);
    let during: string = d.status;
    if (row && sessions.liveById(row.sessionId)?.isActive) {
      during = row.phase === 'worker' ? 'the worker' : 'the audit';
      await store.setEndCause(row.sessionId, 'stop');
      watch.unwatch(row.sessionId);
      try {
        await sessions.kill(row.sessionId, 'stopped from Linear');
      } catch (error) {
        logger.warn({ err: errorMessage(error), session: row.sessionId }, 'could not kill a stopped dispatch session');
      }
    }
    this.#d.slots.stopWaiting(d.id);
    await journal.record(next, 'stopped', { during, sessionId: row?.sessionId ?? null });
    await reporter.tellOnce(
      next,
      {
        type: 'response',
        body: `Stopped work on ${d.identifier} (during ${during}). Nothing more runs until you send a message in this session.`,
      },
      answer,
    );
    await reporter.close(d.id);
    await journal.close(d.id);
    await this.#d.pump();
    return { outcome: 'stopped', dispatch: (await store.get(d.id)) ?? next };
  }
}
