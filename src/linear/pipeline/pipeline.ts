// The Linear dispatch pipeline, as the webhook router calls it: dispatch an issue, pass on the user's prompts and
// stops, and keep everything running (signals of the coding sessions, the monitor, recovery after a restart).
import { resolve } from 'node:path';
import type { SessionSignal } from '../../coding/session.ts';
import type { Timer } from '../../core/clock.ts';
import type { LinearPipelineConfig } from '../../core/config-linear-pipeline.ts';
import { expandHome } from '../../core/config-load.ts';
import { errorMessage, invalidInput } from '../../core/errors.ts';
import { faultPoint } from '../../core/fault.ts';
import { newId } from '../../core/ids.ts';
import { LinearClaimStore } from '../../store/linear-claims.ts';
import type { DispatchContextData, DispatchRecord, DispatchStatus } from '../../store/linear-dispatch-types.ts';
import {
  ACTIVE_DISPATCH_STATUSES,
  FINISHED_DISPATCH_STATUSES,
  SLOT_STATUSES,
} from '../../store/linear-dispatch-types.ts';
import { DispatchStore } from '../../store/linear-dispatches.ts';
import { LinearEffectStore } from '../../store/linear-effects.ts';
import type { LinearIssue } from '../api/types.ts';
import { LinearApprovals } from '../approvals-bridge.ts';
import { LinearEffects } from '../effects.ts';
import { DispatchJournal } from './dispatch-journal.ts';
import { DispatchLanes } from './dispatch-lanes.ts';
import { DispatchReporter } from './dispatch-reporter.ts';
import { transitionDispatch } from './dispatch-transitions.ts';
import { InFlight } from './in-flight.ts';
import type { ClaimKind } from './node-claims.ts';
import { NodeClaims } from './node-claims.ts';
import { AUDITOR_DENIAL, handleSessionEnd, setupDispatch } from './phases.ts';
import { refusalFor } from './placement.ts';
import { sanitizePromptInput } from './prompts.ts';
import type { RecoveryDeps } from './recovery.ts';
import { monitorPass, reconcile, takeOver } from './recovery.ts';
import { RemoteSessions } from './remote-sessions.ts';
import { SessionWatch } from './session-watch.ts';
import { PipelineSlots } from './slots.ts';
import { assessTier, chooseRunners } from './tier.ts';
import type {
  DispatchContext,
  DispatchResult,
  MonitorReport,
  PipelineDeps,
  PromptResult,
  StopResult,
} from './types.ts';
import { DispatchBlockedError } from './types.ts';

/** Follow-up messages kept per dispatch (the newest). */
const MAX_USER_MESSAGES = 10;
/** Prompt activity ids remembered per dispatch (redeliveries of older ones come long after they could matter). */
const MAX_PROMPT_IDS = 50;

/**
 * The pipeline. Call `start()` once the SessionManager has restored its sessions; then `dispatch` for an assigned or
 * delegated issue, `onPrompt` for a user's follow-up in the agent session, `onStop` for a stop signal. `stop()` at
 * shutdown (sessions themselves are stopped by the SessionManager; the next start resumes them).
 */
export class Pipeline {
  #deps: PipelineDeps;
  #pc: LinearPipelineConfig;
  #store: DispatchStore;
  /** The durable ledger of what was told to Linear (keyed effects are sent once). */
  #effects: LinearEffects;
  #lanes: DispatchLanes;
  #journal: DispatchJournal;
  #reporter: DispatchReporter;
  #watch: SessionWatch;
  #slots: PipelineSlots;
  /** What the phases and recovery are handed. */
  #phases: RecoveryDeps;
  #started = false;
  /** Signal handling and failure records running outside the lanes (covered by `idle()`). */
  #inFlight = new InFlight();
  #unsubscribe: (() => void) | null = null;
  #monitor: Timer | null = null;
  /** In a cluster (`placement` given): this node's claims; null on a node alone (it runs every dispatch). */
  #claims: NodeClaims | null;
  /** In a cluster (`forwarder` given): the dispatches' sessions on other nodes. */
  #remote: RemoteSessions | null;
  /** Workers' approvals in their agent sessions (with an ApprovalDesk; listening from construction, see the class). */
  readonly approvals: LinearApprovals | null;

  constructor(deps: PipelineDeps) {
    const { config, clock, logger, db, sessions, logs, linear, notifier } = deps;
    const pc = config.linear.pipeline;
    const store = new DispatchStore(db);
    const effects = new LinearEffects(new LinearEffectStore(db), clock, logger);
    const lanes = new DispatchLanes({ clock, logger, onFailure: (id, message) => this.#recordFailure(id, message) });
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
    const slots = new PipelineSlots({ onDispatchSlotFreed: () => this.#pump() });
    this.#deps = deps;
    this.#pc = pc;
    this.#store = store;
    this.#effects = effects;
    this.#lanes = lanes;
    this.#journal = journal;
    this.#reporter = reporter;
    this.#watch = watch;
    this.#slots = slots;
    const remote = deps.forwarder ? new RemoteSessions(sessions, deps.forwarder) : null;
    this.#remote = remote;
    this.approvals = deps.approvals
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
    const approvals = this.approvals;
    const onPass = pc.onPass ?? (deps.pullRequests ? 'pull-request' : 'done');
    if (onPass === 'pull-request' && !deps.pullRequests)
      logger.warn(
        { onPass },
        'linear.pipeline.onPass is pull-request but GitHub is not enabled (github.enabled): passed audits end done',
      );
    const delivery =
      onPass === 'pull-request' && deps.pullRequests ? { linear, effects, pullRequests: deps.pullRequests } : null;
    const parts = { store, clock, logger, pc, linear, sessions, lanes, reporter, journal, watch, slots, approvals };
    const placement = deps.placement;
    this.#claims = placement ? new NodeClaims({ store, placement, sessions, watch, clock, logger }) : null;
    const claims = this.#claims;
    // In a cluster the phases move only this node's dispatches: once a lost node's dispatch is released or taken by
    // another node, a phase still running here (a stalled node not yet aware it was declared lost) cannot move it.
    this.#phases = {
      ...parts,
      delivery,
      ...(claims ? { store: store.ownedBy(claims.node), mine: (d: DispatchRecord) => claims.mine(d) } : {}),
    };
  }

  /**
   * Starts listening to the coding sessions, recovers every dispatch left in progress by the last run (see
   * recovery.ts), starts queued dispatches while slots are free, and starts the monitor. Idempotent.
   */
  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    this.#unsubscribe = this.#deps.sessions.on((signal) =>
      this.#inFlight.run(
        () => this.#onSignal(signal),
        (error) => this.#signalFailed(signal, error),
      ),
    );
    for (const d of await this.#store.list(SLOT_STATUSES)) {
      if (this.#claims && !this.#claims.mine(d)) continue;
      void this.#lanes.serial(d.id, 'restart', async () => void (await reconcile(this.#phases, d.id)));
    }
    await this.#pump();
    this.#monitor = this.#deps.clock.every(this.#pc.monitorIntervalSec * 1000, () => void this.monitor());
  }

  /** Stops the monitor, the watchdogs and the listeners, and waits for steps in progress. Running sessions are left to the SessionManager. */
  async stop(): Promise<void> {
    this.#started = false;
    this.#monitor?.cancel();
    this.#monitor = null;
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    this.#watch.stopAll();
    await this.approvals?.stop();
    await this.idle();
    await Promise.all([this.#reporter.closeAll(), this.#journal.closeAll()]);
  }

  /**
   * Dispatches an issue (id or identifier): assesses its tier, picks harness and model, and queues it; it starts at
   * once when a slot is free. While the issue already has a dispatch in progress nothing new starts (`duplicate`;
   * a different agent session is told so). Throws invalid_input for an unknown profile or a team without a repository,
   * and the LinearApiError of a failed issue lookup; either way the agent session (if given) gets an error activity.
   * Before `start()` the dispatch is only queued.
   */
  async dispatch(issueRef: string, ctx: DispatchContext = {}): Promise<DispatchResult> {
    try {
      return await this.#dispatch(issueRef, ctx);
    } catch (error) {
      const { linear, logger } = this.#deps;
      if (error instanceof DispatchBlockedError) {
        const agentSessionId = ctx.agentSessionId;
        const said = agentSessionId
          ? this.#once(ctx, 'refused', (id) =>
              linear.createAgentActivity(agentSessionId, { type: 'response', body: error.message }, id ? { id } : {}),
            )
          : this.#once(ctx, 'refused', (id) => linear.createComment(error.issueId, error.message, id ? { id } : {}));
        await said.catch((e: unknown) =>
          logger.warn({ err: errorMessage(e) }, 'could not say why a dispatch was refused'),
        );
        throw error;
      }
      // Linear shows a session without any activity as unresponsive: say why nothing starts.
      const agentSessionId = ctx.agentSessionId;
      if (agentSessionId) {
        const body = `Could not start work on this issue: ${errorMessage(error)}`;
        await this.#once(ctx, 'could-not-start', (id) =>
          linear.createAgentActivity(agentSessionId, { type: 'error', body }, id ? { id } : {}),
        ).catch((e: unknown) => logger.warn({ err: errorMessage(e) }, 'could not report a failed dispatch'));
      }
      throw error;
    }
  }

  async #dispatch(issueRef: string, ctx: DispatchContext): Promise<DispatchResult> {
    const pc = this.#pc;
    if (ctx.profile !== undefined && !pc.profiles[ctx.profile]) {
      throw invalidInput(`profile: no agent profile "${ctx.profile}" in linear.pipeline.profiles`, 'profile');
    }
    const issue = await this.#deps.linear.getIssue(issueRef);
    const active = await this.#store.activeForIssue(issue.id);
    if (active) return this.#duplicate(active, ctx);
    const blocked = await this.#deps.guard?.isBlocked(issue);
    if (blocked) {
      this.#deps.logger.info({ issue: issue.identifier, reason: blocked }, 'pipeline: dispatch refused by the guard');
      throw new DispatchBlockedError(blocked, issue.id);
    }
    const repoPath = this.#repoFor(issue);
    const tier = assessTier(issue, pc.tierRules);
    const profile = ctx.profile ? pc.profiles[ctx.profile] : undefined;
    const runners = chooseRunners({
      tier: tier.tier,
      labels: issue.labels,
      profile,
      pipeline: pc,
      defaultHarness: this.#deps.config.defaultHarness,
    });
    const placement = this.#deps.placement;
    if (placement) {
      const refusal = refusalFor(await placement.nodes(), {
        repoPath,
        harness: runners.worker.harness,
        auditHarness: runners.audit.harness,
      });
      if (refusal) {
        this.#deps.logger.warn({ issue: issue.identifier, reason: refusal }, 'pipeline: no node can run the dispatch');
        throw new DispatchBlockedError(refusal, issue.id);
      }
    }
    let agentSessionId = ctx.agentSessionId ?? null;
    if (!agentSessionId) {
      try {
        // Linear takes no client id for a new agent session: at most one per event (a crash between creating it and
        // recording the dispatch leaves it unconfirmed; the run after the restart then reports with comments).
        const create = () => this.#deps.linear.createAgentSessionOnIssue(issue.id);
        const made = ctx.effectKey
          ? await this.#effects.run(`${ctx.effectKey}/agent-session`, 'at-most-once', create)
          : { kind: 'sent' as const, value: await create() };
        if (made.kind === 'sent') agentSessionId = made.value.id;
        else
          this.#deps.logger.warn(
            { issue: issue.identifier },
            'an agent session may have been created for this issue before a restart; reporting with comments',
          );
      } catch (error) {
        this.#deps.logger.warn(
          { err: errorMessage(error), issue: issue.identifier },
          'could not create a Linear agent session; reporting with comments',
        );
      }
    }
    const clean = (text: string): string => sanitizePromptInput(text, pc.promptInputMaxChars);
    const context: DispatchContextData = {
      issueUrl: issue.url,
      userMessages: ctx.prompt?.trim() ? [clean(ctx.prompt)] : [],
      lastGaps: [],
      ...(ctx.prompt?.trim() ? { prompt: clean(ctx.prompt) } : {}),
      ...(ctx.promptContext ? { promptContext: clean(ctx.promptContext) } : {}),
      ...(ctx.guidance?.length ? { guidance: ctx.guidance.map(clean) } : {}),
      ...(ctx.promptId ? { promptIds: [ctx.promptId] } : {}),
      pickedUp: `Picked up ${issue.identifier}: tier ${tier.tier} (${tier.reason}) → ${runners.worker.harness}${runners.worker.model ? ` ${runners.worker.model}` : ''} (harness from ${runners.harnessSource}).`,
    };
    const { record, created } = await this.#store.insert({
      id: newId(12),
      issueId: issue.id,
      identifier: issue.identifier,
      title: issue.title,
      agentSessionId,
      tier: tier.tier,
      tierReason: tier.reason,
      harness: runners.worker.harness,
      model: runners.worker.model,
      auditHarness: runners.audit.harness,
      auditModel: runners.audit.model,
      profile: ctx.profile ?? null,
      repoPath,
      branch: issue.branchName.trim() || issue.identifier.toLowerCase(),
      context,
      createdAt: this.#deps.clock.now(),
    });
    if (!created) return this.#duplicate(record, ctx);
    faultPoint('linear.pipeline.after-insert');
    // Awaited: once the event is handled, its first thought is in Linear (or claimed, see `announce`).
    await this.announce(record);
    await this.#journal.record(record, 'accepted', { tier: record.tier, harness: record.harness, model: record.model });
    await this.#pump();
    const fresh = (await this.#store.get(record.id)) ?? record;
    const position = await this.#store.queuePosition(record.id);
    // In a cluster, a dispatch under the cap is only waiting for a node that can run it to claim it: no "Queued" then.
    const full = !this.#claims || (await this.#store.list(SLOT_STATUSES)).length >= pc.maxConcurrent;
    if (fresh.status === 'queued' && position !== null && full) {
      // Awaited like the first thought: the event is not marked handled before this is in Linear.
      await this.#reporter.tellOnce(
        fresh,
        {
          type: 'thought',
          body: `Queued (position ${position}): ${pc.maxConcurrent} dispatch${pc.maxConcurrent === 1 ? ' is' : 'es are'} running; it starts when a slot frees up.`,
        },
        `dispatch:${record.id}/queued`,
      );
      return { outcome: 'queued', dispatch: fresh, position };
    }
    return { outcome: 'started', dispatch: fresh };
  }

  /**
   * A user's follow-up in the agent session. A finished dispatch (done, stuck or stopped) is reopened with it: stop
   * flag cleared, a new round of `maxAttempts`, queued. A running worker gets it at once (its current turn is
   * interrupted and it continues with the message). Otherwise it is kept for the next worker and audit prompts.
   */
  async onPrompt(agentSessionId: string, text: string, promptId?: string): Promise<PromptResult> {
    const d = await this.#store.latestForAgentSession(agentSessionId);
    if (!d) return { outcome: 'unknown' };
    // The prompt's id is stored with the message, in the same write: a redelivery of it (after a crash) is recognised.
    if (promptId && d.context.promptIds?.includes(promptId)) return { outcome: 'duplicate', dispatch: d };
    const clean = sanitizePromptInput(text, this.#pc.promptInputMaxChars).trim();
    const userMessages = clean
      ? [...(d.context.userMessages ?? []), clean].slice(-MAX_USER_MESSAGES)
      : (d.context.userMessages ?? []);
    const promptIds = promptId
      ? [...(d.context.promptIds ?? []), promptId].slice(-MAX_PROMPT_IDS)
      : d.context.promptIds;
    const context: DispatchContextData = { ...d.context, userMessages, ...(promptIds ? { promptIds } : {}) };
    if (FINISHED_DISPATCH_STATUSES.includes(d.status)) {
      const next = await transitionDispatch(this.#store, d.id, d.status, 'queued', this.#deps.clock.now(), {
        attempt: d.attempt,
        patch: {
          stopRequested: false,
          attempt: d.attempt + 1,
          roundStart: d.attempt + 1,
          lastError: null,
          context: d.status === 'done' ? { ...context, lastGaps: [] } : context,
        },
      });
      if (!next) return this.onPrompt(agentSessionId, text, promptId);
      await this.#journal.record(next, 'reopened', { from: d.status });
      void this.#reporter.tell(next, {
        type: 'thought',
        body: `Picking ${d.identifier} up again with your message (a new round of up to ${this.#pc.maxAttempts} attempts).`,
      });
      await this.#pump();
      return { outcome: 'reopened', dispatch: (await this.#store.get(d.id)) ?? next };
    }
    const updated = (await this.#store.update(d.id, { context }, this.#deps.clock.now())) ?? d;
    if (d.status === 'working' && clean) {
      const row = await this.#store.currentSession(d.id);
      if (row?.phase === 'worker' && this.#deps.sessions.liveById(row.sessionId)?.isActive) {
        try {
          await this.#deps.sessions.send(row.sessionId, clean, { source: 'user', interrupt: true });
          this.#reporter.thought(updated, 'Passed your message to the worker.');
          await this.#journal.record(updated, 'prompt-forwarded', { sessionId: row.sessionId });
          return { outcome: 'forwarded', dispatch: updated };
        } catch (error) {
          this.#deps.logger.warn({ err: errorMessage(error), dispatch: d.id }, 'could not pass a prompt to the worker');
        }
      }
      const node = row?.phase === 'worker' && this.#remote ? await this.#remote.nodeOf(row.sessionId) : null;
      if (row && node && this.#remote) {
        try {
          await this.#remote.prompt(node, row.sessionId, clean);
          this.#reporter.thought(updated, 'Passed your message to the worker.');
          await this.#journal.record(updated, 'prompt-forwarded', { sessionId: row.sessionId, node });
          return { outcome: 'forwarded', dispatch: updated };
        } catch (error) {
          this.#deps.logger.warn(
            { err: errorMessage(error), dispatch: d.id, node },
            'could not pass a prompt to the worker on another node',
          );
        }
      }
    }
    const when =
      d.status === 'auditing' ? 'the next attempt, if the audit asks for one' : 'the task when the worker starts';
    this.#reporter.thought(updated, `Noted: your message will be part of ${when}.`);
    await this.#journal.record(updated, 'prompt-noted', {});
    return { outcome: 'noted', dispatch: updated };
  }

  /**
   * A stop signal from Linear: the dispatch of that agent session is marked `stopped` (stop flag set), its running
   * worker or auditor is killed, and one response says so. A later prompt reopens it.
   */
  async onStop(agentSessionId: string, stopKey: string): Promise<StopResult> {
    const d = await this.#store.latestForAgentSession(agentSessionId);
    if (!d) return { outcome: 'unknown' };
    // One answer per stop signal, whichever of these it is: a stop run again after a crash finds the dispatch stopped
    // and would say "nothing is running" — under the same key, so it is not said twice.
    const answer = `${stopKey}/response`;
    if (!ACTIVE_DISPATCH_STATUSES.includes(d.status)) {
      await this.#reporter.tellOnce(
        d,
        { type: 'response', body: `Nothing is running for ${d.identifier}: it is ${d.status}.` },
        answer,
      );
      return { outcome: 'idle', dispatch: d };
    }
    const next = await transitionDispatch(this.#store, d.id, d.status, 'stopped', this.#deps.clock.now(), {
      patch: { stopRequested: true },
    });
    if (!next) return this.onStop(agentSessionId, stopKey);
    const row = await this.#store.currentSession(d.id);
    let during: string = d.status;
    if (row && this.#deps.sessions.liveById(row.sessionId)?.isActive) {
      during = row.phase === 'worker' ? 'the worker' : 'the audit';
      await this.#store.setEndCause(row.sessionId, 'stop');
      this.#watch.unwatch(row.sessionId);
      try {
        await this.#deps.sessions.kill(row.sessionId, 'stopped from Linear');
      } catch (error) {
        this.#deps.logger.warn(
          { err: errorMessage(error), session: row.sessionId },
          'could not kill a stopped dispatch session',
        );
      }
    }
    this.#slots.stopWaiting(d.id);
    await this.#journal.record(next, 'stopped', { during, sessionId: row?.sessionId ?? null });
    await this.#reporter.tellOnce(
      next,
      {
        type: 'response',
        body: `Stopped work on ${d.identifier} (during ${during}). Nothing more runs until you send a message in this session.`,
      },
      answer,
    );
    await this.#reporter.close(d.id);
    await this.#journal.close(d.id);
    await this.#pump();
    return { outcome: 'stopped', dispatch: (await this.#store.get(d.id)) ?? next };
  }

  /** One monitor pass (also run every `monitorIntervalSec`); then queued dispatches take the freed slots. */
  async monitor(): Promise<MonitorReport> {
    const report = await monitorPass(this.#phases);
    await this.#pump();
    if (report.stale.length + report.reconciled.length + report.pruned > 0)
      this.#deps.logger.info(report, 'pipeline monitor pass');
    return report;
  }

  /**
   * Looks for work for this node now (cluster): stops to apply, released and queued dispatches to claim. Called on the
   * cluster's notifications and the heartbeat; a no-op before `start()` and on a node alone.
   */
  kick(): void {
    this.#pump().catch((error: unknown) =>
      this.#deps.logger.warn({ err: errorMessage(error) }, 'could not look for Linear dispatches to run'),
    );
  }

  /**
   * The takeover of a lost node (cluster): its unfinished dispatches are released (once: a compare-and-swap on the
   * node) for a node that can run them, and this node looks for them at once. Returns the released dispatches' ids.
   */
  async releaseNode(node: string): Promise<string[]> {
    const released = await this.#store.releaseNode(node, this.#deps.clock.now());
    for (const d of released)
      this.#deps.logger.warn({ dispatch: d.id, issue: d.identifier, node }, 'dispatch of a lost node released');
    this.kick();
    return released.map((d) => d.id);
  }

  /** Dispatches, oldest first, optionally by status. */
  list(statuses?: readonly DispatchStatus[]): Promise<DispatchRecord[]> {
    return this.#store.list(statuses);
  }

  /**
   * Tells the dispatch's agent session that it was picked up — once: a handler run again after a crash (the dispatch
   * exists, the thought may not have gone out) calls it again, and the effect ledger sends it only if it is not known
   * to be in Linear (under the same client id, so never twice).
   */
  async announce(d: DispatchRecord): Promise<void> {
    if (d.context.pickedUp)
      await this.#reporter.tellOnce(d, { type: 'thought', body: d.context.pickedUp }, `dispatch:${d.id}/picked-up`);
  }

  /** The newest dispatch linked to a Linear agent session (any status), if any. */
  forAgentSession(agentSessionId: string): Promise<DispatchRecord | null> {
    return this.#store.latestForAgentSession(agentSessionId);
  }

  /** A dispatch by id, or the newest dispatch of an issue (id or identifier). */
  async get(ref: string): Promise<DispatchRecord | null> {
    return (await this.#store.get(ref)) ?? (await this.#store.latestForIssue(ref));
  }

  /** Resolves once every step queued so far (for every dispatch) has run. */
  async idle(): Promise<void> {
    do {
      await Promise.all([this.#inFlight.settled(), this.#watch.settled(), this.approvals?.idle()]);
      await this.#lanes.idle();
    } while (this.#inFlight.busy || this.#watch.busy || this.approvals?.busy);
  }

  /** Starts queued dispatches while slots are free (each claim is one compare-and-swap, so concurrent pumps are safe). */
  async #pump(): Promise<void> {
    if (!this.#started) return;
    const claims = this.#claims;
    if (claims) {
      await claims.pass(this.#pc.maxConcurrent, (d, kind) => this.#run(claims, d, kind));
      return;
    }
    for (;;) {
      const d = await this.#store.claimNextQueued(this.#pc.maxConcurrent, this.#deps.clock.now());
      if (!d) break;
      void this.#lanes.serial(d.id, 'setup', () => setupDispatch(this.#phases, d.id));
    }
  }

  /** Runs a dispatch this node claimed (cluster): set up when it was queued, taken over when a lost node released it. */
  #run(claims: NodeClaims, d: DispatchRecord, kind: ClaimKind): void {
    const step =
      kind === 'queued'
        ? () => setupDispatch(this.#phases, d.id)
        : async () => void (await takeOver(this.#phases, d.id));
    void this.#lanes.serial(d.id, kind === 'queued' ? 'setup' : 'takeover', step).finally(() => {
      claims.settled(d.id);
      // A claim that ended without a session (stuck, stopped) left its slot free.
      this.kick();
    });
  }

  /** A failed step of a dispatch's lane is kept as its last error (logged when even that cannot be written). */
  #recordFailure(id: string, message: string): void {
    this.#inFlight.run(
      async () => void (await this.#store.update(id, { lastError: message }, this.#deps.clock.now())),
      (error) =>
        this.#deps.logger.error({ err: errorMessage(error), dispatch: id }, 'could not record a failed dispatch step'),
    );
  }

  #signalFailed(signal: SessionSignal, error: unknown): void {
    this.#deps.logger.error(
      { err: errorMessage(error), session: signal.session.id, signal: signal.type },
      'pipeline could not handle a session signal',
    );
  }

  async #onSignal(signal: SessionSignal): Promise<void> {
    if (signal.type === 'ended') {
      const row = await this.#store.session(signal.session.id);
      if (row)
        void this.#lanes.serial(row.dispatchId, 'session-end', () =>
          handleSessionEnd(this.#phases, signal.session.id, { claim: true }),
        );
      for (const id of this.#slots.waitingForSession())
        void this.#lanes.serial(id, 'slot', async () => void (await reconcile(this.#phases, id)));
      // A coding-session slot of this node is free: a queued dispatch may start here.
      if (this.#claims) this.kick();
      return;
    }
    if (signal.type === 'waiting' && signal.reason === 'permission') {
      const row = await this.#store.session(signal.session.id);
      if (row?.phase !== 'audit') return;
      this.#deps.sessions.send(signal.session.id, AUDITOR_DENIAL, { source: 'agent' }).catch((error: unknown) => {
        this.#deps.logger.warn(
          { err: errorMessage(error), session: signal.session.id },
          'could not deny an auditor permission request',
        );
      });
    }
  }

  async #duplicate(existing: DispatchRecord, ctx: DispatchContext): Promise<DispatchResult> {
    // The same request again (a re-run after a crash): what it should have said first, if that was lost.
    if (!ctx.agentSessionId || ctx.agentSessionId === existing.agentSessionId) await this.announce(existing);
    const agentSessionId = ctx.agentSessionId;
    if (agentSessionId && agentSessionId !== existing.agentSessionId) {
      const body = `${existing.identifier} is already being worked on (${existing.status}, attempt ${existing.attempt}) in another agent session; no second run was started.`;
      try {
        await this.#once(ctx, 'duplicate', (id) =>
          this.#deps.linear.createAgentActivity(agentSessionId, { type: 'response', body }, id ? { id } : {}),
        );
      } catch (error) {
        this.#deps.logger.warn({ err: errorMessage(error) }, 'could not answer a duplicate dispatch');
      }
    }
    return { outcome: 'duplicate', dispatch: existing };
  }

  /** Sends an answer about the event that asked for a dispatch: once under its effect key when it has one. */
  async #once(ctx: DispatchContext, what: string, send: (id: string | undefined) => Promise<unknown>): Promise<void> {
    if (!ctx.effectKey) {
      await send(undefined);
      return;
    }
    await this.#effects.run(`${ctx.effectKey}/${what}`, 'keyed', (id) => send(id));
  }

  #repoFor(issue: LinearIssue): string {
    const pc = this.#pc;
    const repo = pc.teamRepos[issue.team.key] ?? pc.repo ?? this.#deps.config.defaultWorkdir;
    if (!repo) {
      throw invalidInput(
        `linear.pipeline.repo: no repository is configured for team ${issue.team.key} (set linear.pipeline.repo or linear.pipeline.teamRepos.${issue.team.key})`,
        'linear.pipeline.repo',
      );
    }
    return resolve(expandHome(repo));
  }
}

/** Builds the pipeline from its dependencies (see PipelineDeps); call `start()` after SessionManager.restore(). */
export function createPipeline(deps: PipelineDeps): Pipeline {
  return new Pipeline(deps);
}
