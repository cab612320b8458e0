// The Linear dispatch pipeline, as the webhook router calls it: dispatch an issue, pass on the user's prompts and
// stops, and keep everything running (signals of the coding sessions, the monitor, recovery after a restart). It
// builds its parts (pipeline-parts.ts) and composes them: the intake (dispatch-intake.ts), Linear's follow-ups and
// stops (follow-ups.ts, stops.ts), the pump into the slots (dispatch-pump.ts) and the sessions' signals
// (session-signals.ts); the phases (phases.ts) and recovery (recovery.ts) move a dispatch along.
import type { Timer } from '../../core/clock.ts';
import type { LinearPipelineConfig } from '../../core/config-linear-pipeline.ts';
import type { DispatchRecord, DispatchStatus } from '../../store/linear-dispatch-types.ts';
import { SLOT_STATUSES } from '../../store/linear-dispatch-types.ts';
import type { LinearApprovals } from '../approvals-bridge.ts';
import { DispatchIntake } from './dispatch-intake.ts';
import { DispatchPump } from './dispatch-pump.ts';
import { setupDispatch } from './dispatch-setup.ts';
import { FollowUps } from './follow-ups.ts';
import { handleSessionEnd } from './phases.ts';
import type { PipelineParts } from './pipeline-parts.ts';
import { buildPipelineParts } from './pipeline-parts.ts';
import { monitorPass, reconcile, takeOver } from './recovery.ts';
import { SessionSignals } from './session-signals.ts';
import { DispatchStops } from './stops.ts';
import type {
  DispatchContext,
  DispatchResult,
  MonitorReport,
  PipelineDeps,
  PromptResult,
  StopResult,
} from './types.ts';

/**
 * The pipeline. Call `start()` once the SessionManager has restored its sessions; then `dispatch` for an assigned or
 * delegated issue, `onPrompt` for a user's follow-up in the agent session, `onStop` for a stop signal. `stop()` at
 * shutdown (sessions themselves are stopped by the SessionManager; the next start resumes them).
 */
export class Pipeline {
  #deps: PipelineDeps;
  #pc: LinearPipelineConfig;
  #parts: PipelineParts;
  #intake: DispatchIntake;
  #followUps: FollowUps;
  #stops: DispatchStops;
  #pump: DispatchPump;
  #signals: SessionSignals;
  #started = false;
  #unsubscribe: (() => void) | null = null;
  #monitor: Timer | null = null;
  /** Workers' approvals in their agent sessions (with an ApprovalDesk; listening from construction, see the class). */
  readonly approvals: LinearApprovals | null;

  constructor(deps: PipelineDeps) {
    const { config, clock, logger, sessions, linear, guard, placement } = deps;
    const pc = config.linear.pipeline;
    const pump = (): Promise<void> => this.#pump.pump();
    const parts = buildPipelineParts(deps, pump);
    const { store, effects, lanes, journal, reporter, watch, slots, claims, remote, phases } = parts;
    this.#deps = deps;
    this.#pc = pc;
    this.#parts = parts;
    this.approvals = parts.approvals;
    this.#pump = new DispatchPump({
      running: () => this.#started,
      store,
      claims,
      lanes,
      clock,
      logger,
      maxConcurrent: pc.maxConcurrent,
      setup: (id) => setupDispatch(phases, id),
      takeOver: async (id) => void (await takeOver(phases, id)),
    });
    this.#intake = new DispatchIntake({
      pc,
      config,
      store,
      linear,
      effects,
      reporter,
      journal,
      clock,
      logger,
      guard,
      placement,
      pump,
    });
    this.#followUps = new FollowUps({ store, clock, logger, pc, sessions, remote, reporter, journal, pump });
    this.#stops = new DispatchStops({ store, clock, logger, sessions, watch, slots, reporter, journal, pump });
    this.#signals = new SessionSignals({
      store,
      lanes,
      slots,
      sessions,
      inFlight: parts.inFlight,
      logger,
      sessionEnded: (sessionId) => handleSessionEnd(phases, sessionId, { claim: true }),
      retry: async (id) => void (await reconcile(phases, id)),
      sessionSlotFreed: claims ? () => this.#pump.kick() : null,
    });
  }

  /**
   * Starts listening to the coding sessions, recovers every dispatch left in progress by the last run (see
   * recovery.ts), starts queued dispatches while slots are free, and starts the monitor. Idempotent.
   */
  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    this.#unsubscribe = this.#deps.sessions.on((signal) => this.#signals.onSignal(signal));
    for (const d of await this.#parts.store.list(SLOT_STATUSES)) {
      if (this.#parts.claims && !this.#parts.claims.mine(d)) continue;
      void this.#parts.lanes.serial(d.id, 'restart', async () => void (await reconcile(this.#parts.phases, d.id)));
    }
    await this.#pump.pump();
    this.#monitor = this.#deps.clock.every(this.#pc.monitorIntervalSec * 1000, () => void this.monitor());
  }

  /**
   * Stops the monitor, the watchdogs and the listeners, and waits for steps in progress. Running sessions are left to
   * the SessionManager.
   */
  async stop(): Promise<void> {
    this.#started = false;
    this.#monitor?.cancel();
    this.#monitor = null;
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    this.#parts.watch.stopAll();
    await this.approvals?.stop();
    await this.idle();
    await Promise.all([this.#parts.reporter.closeAll(), this.#parts.journal.closeAll()]);
  }

  /**
   * Dispatches an issue (id or identifier): assesses its tier, picks harness and model, and queues it; it starts at
   * once when a slot is free. While the issue already has a dispatch in progress nothing new starts (`duplicate`;
   * a different agent session is told so). Throws invalid_input for an unknown profile or a team without a repository,
   * and the LinearApiError of a failed issue lookup; either way the agent session (if given) gets an error activity.
   * Before `start()` the dispatch is only queued.
   */
  dispatch(issueRef: string, ctx: DispatchContext = {}): Promise<DispatchResult> {
    return this.#intake.dispatch(issueRef, ctx);
  }

  /**
   * A user's follow-up in the agent session. A finished dispatch (done, stuck or stopped) is reopened with it: stop
   * flag cleared, a new round of `maxAttempts`, queued. A running worker gets it at once (its current turn is
   * interrupted and it continues with the message). Otherwise it is kept for the next worker and audit prompts.
   */
  onPrompt(agentSessionId: string, text: string, promptId?: string): Promise<PromptResult> {
    return this.#followUps.onPrompt(agentSessionId, text, promptId);
  }

  /**
   * A stop signal from Linear: the dispatch of that agent session is marked `stopped` (stop flag set), its running
   * worker or auditor is killed, and one response says so. A later prompt reopens it.
   */
  onStop(agentSessionId: string, stopKey: string): Promise<StopResult> {
    return this.#stops.onStop(agentSessionId, stopKey);
  }

  /** One monitor pass (also run every `monitorIntervalSec`); then queued dispatches take the freed slots. */
  async monitor(): Promise<MonitorReport> {
    const report = await monitorPass(this.#parts.phases);
    await this.#pump.pump();
    if (report.stale.length + report.reconciled.length + report.pruned > 0)
      this.#deps.logger.info(report, 'pipeline monitor pass');
    return report;
  }

  /**
   * Looks for work for this node now (cluster): stops to apply, released and queued dispatches to claim. Called on the
   * cluster's notifications and the heartbeat; a no-op before `start()` and on a node alone.
   */
  kick(): void {
    this.#pump.kick();
  }

  /**
   * The takeover of a lost node (cluster): its unfinished dispatches are released (once: a compare-and-swap on the
   * node) for a node that can run them, and this node looks for them at once. Returns the released dispatches' ids.
   */
  async releaseNode(node: string): Promise<string[]> {
    const released = await this.#parts.store.releaseNode(node, this.#deps.clock.now());
    for (const d of released)
      this.#deps.logger.warn({ dispatch: d.id, issue: d.identifier, node }, 'dispatch of a lost node released');
    this.kick();
    return released.map((d) => d.id);
  }

  /** Dispatches, oldest first, optionally by status. */
  list(statuses?: readonly DispatchStatus[]): Promise<DispatchRecord[]> {
    return this.#parts.store.list(statuses);
  }

  /**
   * Tells the dispatch's agent session that it was picked up — once: a handler run again after a crash (the dispatch
   * exists, the thought may not have gone out) calls it again, and the effect ledger sends it only if it is not known
   * to be in Linear (under the same client id, so never twice).
   */
  announce(d: DispatchRecord): Promise<void> {
    return this.#intake.announce(d);
  }

  /** The newest dispatch linked to a Linear agent session (any status), if any. */
  forAgentSession(agentSessionId: string): Promise<DispatchRecord | null> {
    return this.#parts.store.latestForAgentSession(agentSessionId);
  }

  /** A dispatch by id, or the newest dispatch of an issue (id or identifier). */
  async get(ref: string): Promise<DispatchRecord | null> {
    return (await this.#parts.store.get(ref)) ?? (await this.#parts.store.latestForIssue(ref));
  }

  /** Resolves once every step queued so far (for every dispatch) has run. */
  async idle(): Promise<void> {
    do {
      await Promise.all([this.#parts.inFlight.settled(), this.#parts.watch.settled(), this.approvals?.idle()]);
      await this.#parts.lanes.idle();
    } while (this.#parts.inFlight.busy || this.#parts.watch.busy || this.approvals?.busy);
  }
}

/** Builds the pipeline from its dependencies (see PipelineDeps); call `start()` after SessionManager.restore(). */
export function createPipeline(deps: PipelineDeps): Pipeline {
  return new Pipeline(deps);
}
