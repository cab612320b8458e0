// The parts the pipeline is made of, built once from PipelineDeps: the dispatch store, Linear's effect ledger, the
// lanes, journal, reporter, watchdogs and slots, the cluster's claims and remote sessions, the approvals bridge, and
// what the phases and recovery are handed. The pipeline composes them (pipeline.ts); no part knows the others except
// through its constructor.
import { errorMessage } from '../../core/errors.ts';
import { KeyedSerial } from '../../core/keyed-serial.ts';
import { LinearClaimStore } from '../../store/linear-claims.ts';
import type { DispatchRecord } from '../../store/linear-dispatch-types.ts';
import { DispatchStore } from '../../store/linear-dispatches.ts';
import { LinearEffectStore } from '../../store/linear-effects.ts';
import { LinearApprovals } from '../approvals-bridge.ts';
import { LinearEffects } from '../effects.ts';
import type { DeliveryDeps } from './deliver.ts';
import { DispatchJournal } from './dispatch-journal.ts';
import { DispatchLanes } from './dispatch-lanes.ts';
import { DispatchReporter } from './dispatch-reporter.ts';
import { InFlight } from './in-flight.ts';
import { NodeClaims } from './node-claims.ts';
import type { RecoveryDeps } from './recovery.ts';
import { RemoteSessions } from './remote-sessions.ts';
import { SessionWatch } from './session-watch.ts';
import { PipelineSlots } from './slots.ts';
import type { PipelineDeps } from './types.ts';

/** The pipeline's parts (see the file's head). */
export interface PipelineParts {
  /** The full dispatch store (every node's dispatches). */
  store: DispatchStore;
  /** The durable ledger of what was told to Linear (keyed effects are sent once). */
  effects: LinearEffects;
  lanes: DispatchLanes;
  journal: DispatchJournal;
  reporter: DispatchReporter;
  watch: SessionWatch;
  slots: PipelineSlots;
  /** Background store work outside the lanes (a failed step's record, signal handling), covered by `idle()`. */
  inFlight: InFlight;
  /** In a cluster (`placement` given): this node's claims; null on a node alone (it runs every dispatch). */
  claims: NodeClaims | null;
  /** In a cluster (`forwarder` given): the dispatches' sessions on other nodes. */
  remote: RemoteSessions | null;
  /** Workers' approvals in their agent sessions (with an ApprovalDesk; listening from construction). */
  approvals: LinearApprovals | null;
  /** What the phases and recovery are handed (in a cluster: this node's view of the store). */
  phases: RecoveryDeps;
}

/**
 * Builds the parts. `onDispatchSlotFreed` is what a dispatch giving its slot back calls (the pipeline's pump). A step
 * of a lane that throws is recorded as the dispatch's `lastError` (logged when even that cannot be written).
 */
export function buildPipelineParts(deps: PipelineDeps, onDispatchSlotFreed: () => Promise<void>): PipelineParts {
  const { config, clock, logger, db, sessions, logs, linear, notifier } = deps;
  const pc = config.linear.pipeline;
  const store = new DispatchStore(db);
  const inFlight = new InFlight();
  const effects = new LinearEffects(new LinearEffectStore(db), clock, logger);
  const onFailure = (id: string, message: string): void =>
    inFlight.run(
      async () => void (await store.update(id, { lastError: message }, clock.now())),
      (error) => logger.error({ err: errorMessage(error), dispatch: id }, 'could not record a failed dispatch step'),
    );
  const lanes = new DispatchLanes({ clock, logger, onFailure });
  const journal = new DispatchJournal({ store, clock, logger, maxWorkerBytes: pc.workerOutputMaxBytes });
  const reporter = new DispatchReporter({
    linear,
    effects,
    notifier,
    journal,
    gateway: config.gateway,
    clock,
    logger,
    throttleMs: pc.activityThrottleMs,
  });
  const watch = new SessionWatch({ clock, logger, logs, sessions, store, reporter, pc });
  const slots = new PipelineSlots({ onDispatchSlotFreed });
  const remote = deps.forwarder ? new RemoteSessions(sessions, deps.forwarder) : null;
  const approvals = deps.approvals
    ? new LinearApprovals({
        desk: deps.approvals,
        store,
        reporter,
        claims: new LinearClaimStore(db),
        clock,
        logger,
        remote,
      })
    : null;
  const claims = deps.placement
    ? new NodeClaims({ store, placement: deps.placement, sessions, watch, clock, logger })
    : null;
  const repositories = new KeyedSerial<string>();
  const shared = {
    store,
    clock,
    logger,
    pc,
    linear,
    sessions,
    lanes,
    repositories,
    reporter,
    journal,
    watch,
    slots,
    approvals,
  };
  // In a cluster the phases move only this node's dispatches: once a lost node's dispatch is released or taken by
  // another node, a phase still running here (a stalled node not yet aware it was declared lost) cannot move it.
  const phases: RecoveryDeps = {
    ...shared,
    delivery: delivery(deps, effects),
    ...(claims ? { store: store.ownedBy(claims.node), mine: (d: DispatchRecord) => claims.mine(d) } : {}),
  };
  return { store, effects, lanes, journal, reporter, watch, slots, inFlight, claims, remote, approvals, phases };
}

/** What a passed audit's pull request needs (`onPass: pull-request` with GitHub); null: a pass ends `done`. */
function delivery(deps: PipelineDeps, effects: LinearEffects): DeliveryDeps | null {
  const onPass = deps.config.linear.pipeline.onPass ?? (deps.pullRequests ? 'pull-request' : 'done');
  if (onPass === 'pull-request' && !deps.pullRequests)
    deps.logger.warn(
      { onPass },
      'linear.pipeline.onPass is pull-request but GitHub is not enabled (github.enabled): passed audits end done',
    );
  return onPass === 'pull-request' && deps.pullRequests
    ? { linear: deps.linear, effects, pullRequests: deps.pullRequests }
    : null;
}
