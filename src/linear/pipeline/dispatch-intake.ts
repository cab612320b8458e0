// Taking in a dispatch request (an assignment, a delegation, a mention): the issue looked up, a dispatch already in
// progress answered as a duplicate, the guard and the cluster's placement asked, an agent session made when none came
// with it, the dispatch stored and announced, and "Queued" said when it must wait. What is said about the requesting
// event (a refusal, a failure, a duplicate) is sent once under its effect key, however often the event comes.
import type { Clock } from '../../core/clock.ts';
import { errorMessage, invalidInput } from '../../core/errors.ts';
import { faultPoint } from '../../core/fault.ts';
import { newId } from '../../core/ids.ts';
import type { Logger } from '../../core/logger.ts';
import type { DispatchRecord } from '../../store/linear-dispatch-types.ts';
import { SLOT_STATUSES } from '../../store/linear-dispatch-types.ts';
import type { DispatchStore } from '../../store/linear-dispatches.ts';
import type { LinearApi, LinearIssue } from '../api/types.ts';
import type { LinearEffects } from '../effects.ts';
import type { DispatchJournal } from './dispatch-journal.ts';
import type { DispatchPlan, PlanSettings } from './dispatch-plan.ts';
import { newDispatchRow, planDispatch } from './dispatch-plan.ts';
import type { DispatchReporter } from './dispatch-reporter.ts';
import type { DispatchPlacement } from './placement.ts';
import { refusalFor } from './placement.ts';
import type { DispatchContext, DispatchGuard, DispatchResult } from './types.ts';
import { DispatchBlockedError } from './types.ts';

/** What the intake is built from: the full dispatch store (not one node's view) and the calls it makes on the rest. */
export interface DispatchIntakeDeps extends PlanSettings {
  store: Pick<DispatchStore, 'activeForIssue' | 'insert' | 'get' | 'queuePosition' | 'list'>;
  linear: Pick<LinearApi, 'getIssue' | 'createAgentSessionOnIssue' | 'createAgentActivity' | 'createComment'>;
  /** The durable ledger of what was told to Linear (keyed effects are sent once). */
  effects: Pick<LinearEffects, 'run'>;
  reporter: Pick<DispatchReporter, 'tellOnce'>;
  journal: Pick<DispatchJournal, 'record'>;
  clock: Clock;
  logger: Logger;
  /** Checked before a new dispatch is created; none: everything may be dispatched. */
  guard?: DispatchGuard | undefined;
  /** In a cluster: the cluster's nodes (a dispatch none of them can run is refused). None: a node alone. */
  placement?: Pick<DispatchPlacement, 'nodes'> | undefined;
  /** Starts queued dispatches while slots are free (resolves once those that could start have). */
  pump: () => Promise<void>;
}

/** Takes in dispatch requests and answers duplicates; see `dispatch`. */
export class DispatchIntake {
  readonly #d: DispatchIntakeDeps;

  constructor(deps: DispatchIntakeDeps) {
    this.#d = deps;
  }

  /**
   * Dispatches an issue (id or identifier): queued, and started when the pump finds a slot free. A dispatch already in
   * progress for the issue is answered `duplicate`. Throws what `Pipeline.dispatch` documents (a refusal, invalid
   * input, a failed lookup), after telling the agent session (or, for a refusal, the issue) why.
   */
  async dispatch(issueRef: string, ctx: DispatchContext): Promise<DispatchResult> {
    try {
      return await this.#dispatch(issueRef, ctx);
    } catch (error) {
      const { linear, logger } = this.#d;
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

  /**
   * Tells the dispatch's agent session that it was picked up — once: a handler run again after a crash (the dispatch
   * exists, the thought may not have gone out) calls it again, and the effect ledger sends it only if it is not known
   * to be in Linear (under the same client id, so never twice).
   */
  async announce(d: DispatchRecord): Promise<void> {
    if (d.context.pickedUp)
      await this.#d.reporter.tellOnce(d, { type: 'thought', body: d.context.pickedUp }, `dispatch:${d.id}/picked-up`);
  }

  async #dispatch(issueRef: string, ctx: DispatchContext): Promise<DispatchResult> {
    const { pc, store, linear, clock, logger } = this.#d;
    if (ctx.profile !== undefined && !pc.profiles[ctx.profile]) {
      throw invalidInput(`profile: no agent profile "${ctx.profile}" in linear.pipeline.profiles`, 'profile');
    }
    const issue = await linear.getIssue(issueRef);
    const active = await store.activeForIssue(issue.id);
    if (active) return this.#duplicate(active, ctx);
    const blocked = await this.#d.guard?.isBlocked(issue);
    if (blocked) {
      logger.info({ issue: issue.identifier, reason: blocked }, 'pipeline: dispatch refused by the guard');
      throw new DispatchBlockedError(blocked, issue.id);
    }
    const plan = planDispatch(issue, ctx.profile, this.#d);
    await this.#checkPlacement(issue, plan);
    // No agent session came with the request (an empty id counts as none): make one.
    const agentSessionId = ctx.agentSessionId || (await this.#newAgentSession(issue, ctx));
    const { record, created } = await store.insert(
      newDispatchRow({ id: newId(12), issue, ctx, plan, agentSessionId, pc, now: clock.now() }),
    );
    if (!created) return this.#duplicate(record, ctx);
    faultPoint('linear.pipeline.after-insert');
    // Awaited: once the event is handled, its first thought is in Linear (or claimed, see `announce`).
    await this.announce(record);
    await this.#d.journal.record(record, 'accepted', {
      tier: record.tier,
      harness: record.harness,
      model: record.model,
    });
    await this.#d.pump();
    const fresh = (await store.get(record.id)) ?? record;
    const position = await store.queuePosition(record.id);
    // In a cluster, a dispatch under the cap is only waiting for a node that can run it to claim it: no "Queued" then.
    const full = !this.#d.placement || (await store.list(SLOT_STATUSES)).length >= pc.maxConcurrent;
    if (fresh.status === 'queued' && position !== null && full) {
      // Awaited like the first thought: the event is not marked handled before this is in Linear.
      await this.#d.reporter.tellOnce(
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

  /** In a cluster: refuses (DispatchBlockedError) a dispatch that no node could run, naming each node's reason. */
  async #checkPlacement(issue: LinearIssue, plan: DispatchPlan): Promise<void> {
    const placement = this.#d.placement;
    if (!placement) return;
    const refusal = refusalFor(await placement.nodes(), {
      repoPath: plan.repoPath,
      harness: plan.runners.worker.harness,
      auditHarness: plan.runners.audit.harness,
    });
    if (refusal) {
      this.#d.logger.warn({ issue: issue.identifier, reason: refusal }, 'pipeline: no node can run the dispatch');
      throw new DispatchBlockedError(refusal, issue.id);
    }
  }

  /** A new agent session on the issue to report to; null (report with comments) when it could not be made for sure. */
  async #newAgentSession(issue: LinearIssue, ctx: DispatchContext): Promise<string | null> {
    const { linear, effects, logger } = this.#d;
    try {
      // Linear takes no client id for a new agent session: at most one per event (a crash between creating it and
      // recording the dispatch leaves it unconfirmed; the run after the restart then reports with comments).
      const create = () => linear.createAgentSessionOnIssue(issue.id);
      const made = ctx.effectKey
        ? await effects.run(`${ctx.effectKey}/agent-session`, 'at-most-once', create)
        : { kind: 'sent' as const, value: await create() };
      if (made.kind === 'sent') return made.value.id;
      logger.warn(
        { issue: issue.identifier },
        'an agent session may have been created for this issue before a restart; reporting with comments',
      );
    } catch (error) {
      logger.warn(
        { err: errorMessage(error), issue: issue.identifier },
        'could not create a Linear agent session; reporting with comments',
      );
    }
    return null;
  }

  async #duplicate(existing: DispatchRecord, ctx: DispatchContext): Promise<DispatchResult> {
    // The same request again (a re-run after a crash): what it should have said first, if that was lost.
    if (!ctx.agentSessionId || ctx.agentSessionId === existing.agentSessionId) await this.announce(existing);
    const agentSessionId = ctx.agentSessionId;
    if (agentSessionId && agentSessionId !== existing.agentSessionId) {
      const body = `${existing.identifier} is already being worked on (${existing.status}, attempt ${existing.attempt}) in another agent session; no second run was started.`;
      try {
        await this.#once(ctx, 'duplicate', (id) =>
          this.#d.linear.createAgentActivity(agentSessionId, { type: 'response', body }, id ? { id } : {}),
        );
      } catch (error) {
        this.#d.logger.warn({ err: errorMessage(error) }, 'could not answer a duplicate dispatch');
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
    await this.#d.effects.run(`${ctx.effectKey}/${what}`, 'keyed', (id) => send(id));
  }
}
