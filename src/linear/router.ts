// The Linear event router: takes each verified webhook event over (durably) and sends it where it belongs — agent
// sessions to the dispatch pipeline or, for a project being planned, the planner; comments that address an agent
// profile to a mention answer; "plan this project" to the planner; new issues to triage; assignments to a dispatch.
// The same thing reported by two webhooks (an assignment and its AppUserNotification, a comment and its mention
// notification) is handled once, by durable claims; a redelivered event never does its work twice.
//
// A composition of its parts, one per kind of event: `agent-session-routing.ts`, `issue-routing.ts` (new issues and
// assignments), `notification-routing.ts`, `comment-routing.ts`; the durable jobs they queue (`router-jobs.ts`, run by
// `jobs.ts`), what a failed event becomes (`event-failures.ts`) and the pruning of old claims (`router-prune.ts`).
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';
import type { LinearClaimStore } from '../store/linear-claims.ts';
import type { LinearJobStore } from '../store/linear-jobs.ts';
import { AgentSessionRouting } from './agent-session-routing.ts';
import type { LinearApi } from './api/types.ts';
import type { LinearApprovals } from './approvals-bridge.ts';
import { CommentRouting } from './comment-routing.ts';
import type { LinearEffects } from './effects.ts';
import { reportEventFailure } from './event-failures.ts';
import { IssueRouting } from './issue-routing.ts';
import { JobRunner } from './jobs.ts';
import type { MentionResponder } from './mentions.ts';
import { NotificationRouting } from './notification-routing.ts';
import type { Pipeline } from './pipeline/pipeline.ts';
import type { Planner } from './planner/planner.ts';
import { routerJobKinds } from './router-jobs.ts';
import { RouterPrune } from './router-prune.ts';
import type { Triage } from './triage.ts';
import type { LinearEvent, LinearEventHandler } from './webhooks/events.ts';

/** What the router needs of the pipeline. */
export type RouterPipeline = Pick<
  Pipeline,
  'dispatch' | 'onPrompt' | 'onStop' | 'get' | 'forAgentSession' | 'announce'
>;

/** What the router is built from (the daemon's Linear integration, or a test). */
export interface LinearRouterDeps {
  config: Config;
  api: LinearApi;
  pipeline: RouterPipeline;
  planner: Planner;
  triage: Triage;
  mentions: MentionResponder;
  claims: LinearClaimStore;
  jobStore: LinearJobStore;
  /** The ledger through which the router's own activities and comments are sent once per event. */
  effects: LinearEffects;
  /** Workers' approvals: a reply while one is pending decides it (the pipeline's, when the daemon has a desk). */
  approvals?: Pick<LinearApprovals, 'reply'> | null;
  clock: Clock;
  logger: Logger;
}

/** The LinearEventHandler of the daemon. `start()` runs its job queue; `stop()` at shutdown. */
export class LinearRouter implements LinearEventHandler {
  readonly jobs: JobRunner;
  #d: LinearRouterDeps;
  #comments: CommentRouting;
  #sessions: AgentSessionRouting;
  #issues: IssueRouting;
  #notifications: NotificationRouting;
  #prune: RouterPrune;

  constructor(deps: LinearRouterDeps) {
    this.#d = deps;
    this.jobs = new JobRunner({
      store: deps.jobStore,
      kinds: routerJobKinds({
        api: deps.api,
        effects: deps.effects,
        planner: deps.planner,
        triage: deps.triage,
        mentions: deps.mentions,
        logger: deps.logger,
        routeNotificationMention: (job) => this.#comments.routeNotification(job),
      }),
      clock: deps.clock,
      logger: deps.logger,
      config: deps.config.linear.router,
    });
    const { config, api, pipeline, planner, triage, claims, jobStore, effects, approvals, clock, logger } = deps;
    const jobs = this.jobs;
    this.#comments = new CommentRouting({ config, api, planner, claims, jobStore, jobs, effects, clock, logger });
    this.#sessions = new AgentSessionRouting({
      config,
      api,
      pipeline,
      planner,
      comments: this.#comments,
      claims,
      jobs,
      effects,
      approvals,
      clock,
      logger,
    });
    this.#issues = new IssueRouting({ config, api, pipeline, triage, claims, jobs, effects, clock, logger });
    this.#notifications = new NotificationRouting({
      config,
      jobs,
      assigned: (issueId, source, deliveryId) => this.#issues.assigned(issueId, source, deliveryId),
      clock,
      logger,
    });
    this.#prune = new RouterPrune({ config, claims, jobStore, effects, clock, logger });
  }

  /** Runs the job queue (resuming what a restart cut off) and prunes old claims and jobs every `pruneIntervalSec`. */
  async start(): Promise<void> {
    await this.jobs.start();
    await this.#prune.start();
  }

  /** Stops pruning and the job queue (waiting for the running jobs). */
  async stop(): Promise<void> {
    this.#prune.stop();
    await this.jobs.stop();
  }

  /**
   * Takes one event over. Resolves once its work is started or durably queued; rejects (so the webhook worker retries
   * the delivery) only for failures that may pass. Other failures are logged and told in Linear where there is a place.
   */
  async handle(event: LinearEvent): Promise<void> {
    const { logger } = this.#d;
    try {
      switch (event.type) {
        case 'agentSession.created':
          return await this.#sessions.created(event);
        case 'agentSession.prompted':
          return await this.#sessions.prompted(event);
        case 'agentSession.stop':
          return await this.#sessions.stop(event);
        case 'comment.created':
          if (!event.issue)
            return logger.info(
              { delivery: event.deliveryId, comment: event.commentId },
              'linear comment without an issue; nothing to do',
            );
          return await this.#comments.route({
            issueId: event.issue.id,
            commentId: event.commentId,
            parentId: event.parentId,
            body: event.body,
            mentions: event.mentions,
            author: event.author?.name ?? null,
            via: 'comment',
            addressed: this.#comments.addressesApp(event.mentions, await this.#comments.appHandles()),
          });
        case 'issue.created':
          return await this.#issues.created(event.issue.id, event.issue.identifier);
        case 'issue.assigned':
          return await this.#issues.assigned(event.issue.id, 'issue', event.deliveryId);
        case 'appUserNotification':
          return await this.#notifications.route(event);
      }
    } catch (error) {
      await reportEventFailure({ api: this.#d.api, effects: this.#d.effects, logger }, event, error);
    }
  }
}
