// Issue events from Linear: a new issue becomes a triage job (when triage is on and has a model), and an assignment
// (or delegation) to the app becomes one agent session and one dispatch, whichever webhook reports it first (the Issue
// webhook or its AppUserNotification); the other report and redeliveries do nothing new (claims in
// `store/linear-claims.ts`, the agent session made at most once through the effect ledger).
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import { errorMessage } from '../core/errors.ts';
import { faultPoint } from '../core/fault.ts';
import type { Logger } from '../core/logger.ts';
import type { AssignmentSource, LinearClaimStore } from '../store/linear-claims.ts';
import { ACTIVE_DISPATCH_STATUSES } from '../store/linear-dispatch-types.ts';
import type { LinearApi } from './api/types.ts';
import type { LinearEffects } from './effects.ts';
import { AlreadyReported } from './event-failures.ts';
import type { JobRunner } from './jobs.ts';
import { isRetryable } from './jobs.ts';
import type { Pipeline } from './pipeline/pipeline.ts';
import { JOB } from './router-jobs.ts';
import type { Triage } from './triage.ts';

/** What issue routing is built from: only the calls it makes on each. */
export interface IssueRoutingDeps {
  config: Pick<Config, 'linear'>;
  api: Pick<LinearApi, 'createAgentSessionOnIssue'>;
  pipeline: Pick<Pipeline, 'dispatch' | 'get'>;
  triage: Pick<Triage, 'active'>;
  claims: Pick<LinearClaimStore, 'recordAssignment' | 'setAssignmentSession'>;
  /** New issues are triaged as durable jobs. */
  jobs: Pick<JobRunner, 'enqueue'>;
  effects: Pick<LinearEffects, 'run'>;
  clock: Clock;
  logger: Logger;
}

/** Routes `issue.created` and assignments to the app (see the file comment). */
export class IssueRouting {
  readonly #d: IssueRoutingDeps;

  constructor(deps: IssueRoutingDeps) {
    this.#d = deps;
  }

  /** A new issue: queues its triage job (`triage:<issue>`, once) unless triage is off or has no model. */
  async created(issueId: string, identifier: string): Promise<void> {
    const { config, triage, logger } = this.#d;
    if (!config.linear.triage.enabled) return;
    if (!triage.active) {
      logger.info({ issue: identifier }, 'linear triage skipped: no inference provider is configured');
      return;
    }
    await this.#d.jobs.enqueue({
      key: `triage:${issueId}`,
      kind: JOB.triage,
      serialKey: `issue:${issueId}`,
      payload: { issueId, identifier },
    });
  }

  /**
   * An assignment (or delegation) to the app: one agent session and one dispatch per assignment, whichever webhook
   * reports it first; the other report (within `assignmentPairWindowSec`) and redeliveries do nothing new. Rejects
   * when it may pass, or with `AlreadyReported` when the pipeline refused the dispatch (and said so).
   */
  async assigned(issueId: string, source: AssignmentSource, deliveryId: string): Promise<void> {
    const { claims, pipeline, api, clock, logger, config, effects } = this.#d;
    const claim = await claims.recordAssignment({
      issueId,
      source,
      deliveryId,
      now: clock.now(),
      windowMs: config.linear.router.assignmentPairWindowSec * 1000,
    });
    if (claim.kind === 'paired' || (claim.kind === 'redelivery' && claim.paired)) {
      logger.info(
        { issue: issueId, source },
        'linear assignment already reported by the other webhook; dispatched once',
      );
      return;
    }
    let agentSessionId = claim.agentSessionId;
    const sessionKey = `assignment:${claim.seq}/agent-session`;
    if (!agentSessionId) {
      const existing = await pipeline.get(issueId);
      if (existing && ACTIVE_DISPATCH_STATUSES.includes(existing.status)) {
        logger.info(
          { issue: existing.identifier, status: existing.status },
          'linear assignment of an issue already in progress; nothing new started',
        );
        return;
      }
      try {
        // At most one agent session per assignment (Linear takes no client id for it): recorded with the assignment
        // inside the claimed effect, so a crash in between leaves it unconfirmed and the run after does not make another.
        const made = await effects.run(sessionKey, 'at-most-once', async () => {
          const session = await api.createAgentSessionOnIssue(issueId);
          faultPoint('linear.router.after-agent-session');
          await claims.setAssignmentSession(claim.seq, session.id);
          return session;
        });
        if (made.kind === 'sent') agentSessionId = made.value.id;
      } catch (error) {
        if (isRetryable(error)) throw error;
        logger.warn(
          { err: errorMessage(error), issue: issueId },
          'could not create a Linear agent session for an assignment; the pipeline reports with comments',
        );
      }
    }
    try {
      // Without a session, the pipeline's own attempt to create one is the same effect (at most once in all).
      await pipeline.dispatch(issueId, agentSessionId ? { agentSessionId } : { effectKey: `assignment:${claim.seq}` });
    } catch (error) {
      throw new AlreadyReported(error);
    }
  }
}
