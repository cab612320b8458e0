// The Linear event router: takes each verified webhook event over (durably) and sends it where it belongs — agent
// sessions to the dispatch pipeline or, for a project being planned, the planner; comments that address an agent
// profile to a mention answer; "plan this project" to the planner; new issues to triage; assignments to a dispatch.
// The same thing reported by two webhooks (an assignment and its AppUserNotification, a comment and its mention
// notification) is handled once, by durable claims; a redelivered event never does its work twice.
import type { Clock, Timer } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import { errorMessage } from '../core/errors.ts';
import { faultPoint } from '../core/fault.ts';
import type { Logger } from '../core/logger.ts';
import type { AssignmentSource, LinearClaimStore } from '../store/linear-claims.ts';
import { ACTIVE_DISPATCH_STATUSES } from '../store/linear-dispatch-types.ts';
import type { LinearJobStore } from '../store/linear-jobs.ts';
import type { LinearApi } from './api/types.ts';
import { linearDecider } from './approval-replies.ts';
import type { LinearApprovals } from './approvals-bridge.ts';
import { CommentRouting } from './comment-routing.ts';
import type { LinearEffects } from './effects.ts';
import { eventKey } from './event-keys.ts';
import { isRetryable, JobRunner } from './jobs.ts';
import type { MentionResponder } from './mentions.ts';
import { profileForMentions } from './mentions.ts';
import type { Pipeline } from './pipeline/pipeline.ts';
import type { Planner } from './planner/planner.ts';
import { plannerCommand } from './planner/prompts.ts';
import { JOB, routerJobKinds } from './router-jobs.ts';
import type { Triage } from './triage.ts';
import type { LinearEvent, LinearEventHandler } from './webhooks/events.ts';
import { extractMentions } from './webhooks/parse.ts';

/** What the router needs of the pipeline. */
export type RouterPipeline = Pick<
  Pipeline,
  'dispatch' | 'onPrompt' | 'onStop' | 'get' | 'forAgentSession' | 'announce'
>;

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

/** A failure the user was already told about (the pipeline posts its own error activity). */
class AlreadyReported extends Error {
  readonly original: unknown;
  constructor(original: unknown) {
    super(errorMessage(original));
    this.name = 'AlreadyReported';
    this.original = original;
  }
}

/** The LinearEventHandler of the daemon. `start()` runs its job queue; `stop()` at shutdown. */
export class LinearRouter implements LinearEventHandler {
  readonly jobs: JobRunner;
  #d: LinearRouterDeps;
  #comments: CommentRouting;
  #pruneTimer: Timer | undefined;

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
    this.#comments = new CommentRouting({ ...deps, jobs: this.jobs });
  }

  /** Runs the job queue (resuming what a restart cut off) and prunes old claims and jobs every `pruneIntervalSec`. */
  async start(): Promise<void> {
    await this.jobs.start();
    await this.#prune();
    this.#pruneTimer ??= this.#d.clock.every(
      this.#d.config.linear.router.pruneIntervalSec * 1000,
      () => void this.#prune(),
    );
  }

  async stop(): Promise<void> {
    this.#pruneTimer?.cancel();
    this.#pruneTimer = undefined;
    await this.jobs.stop();
  }

  async #prune(): Promise<void> {
    const { claims, jobStore, clock, logger, config } = this.#d;
    try {
      const before = clock.now() - config.linear.router.retentionSec * 1000;
      const removed =
        (await claims.prune(before)) + (await jobStore.prune(before)) + (await this.#d.effects.prune(before));
      if (removed > 0) logger.info({ removed }, 'linear router: pruned old claims and jobs');
    } catch (error) {
      logger.error({ err: errorMessage(error) }, 'linear router: prune failed');
    }
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
          return await this.#created(event);
        case 'agentSession.prompted':
          return await this.#prompted(event);
        case 'agentSession.stop':
          return await this.#stop(event);
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
          return await this.#issueCreated(event.issue.id, event.issue.identifier);
        case 'issue.assigned':
          return await this.#assigned(event.issue.id, 'issue', event.deliveryId);
        case 'appUserNotification':
          return await this.#notification(event);
      }
    } catch (error) {
      await this.#failed(event, error);
    }
  }

  async #failed(event: LinearEvent, error: unknown): Promise<void> {
    const { logger, api } = this.#d;
    const cause = error instanceof AlreadyReported ? error.original : error;
    const meta = { delivery: event.deliveryId, type: event.type, err: errorMessage(cause) };
    if (isRetryable(cause)) {
      logger.warn(meta, 'linear event handling failed; the delivery will be retried');
      throw cause;
    }
    logger.error(meta, 'linear event handling failed');
    if (error instanceof AlreadyReported) return;
    const text = `switchboard could not handle this: ${errorMessage(cause)}`;
    const key = `${eventKey(event)}/failed`;
    try {
      if (event.type.startsWith('agentSession.') && 'agentSessionId' in event) {
        const agentSessionId = event.agentSessionId;
        await this.#d.effects.run(key, 'keyed', (id) =>
          api.createAgentActivity(agentSessionId, { type: 'error', body: text }, { id }),
        );
      } else if (event.type === 'comment.created' && event.issue) {
        const issueId = event.issue.id;
        const parentId = event.parentId ?? event.commentId;
        await this.#d.effects.run(key, 'keyed', (id) => api.createComment(issueId, text, { parentId, id }));
      }
    } catch (reportError) {
      logger.error(
        { ...meta, reportErr: errorMessage(reportError) },
        'linear: could not report a failed event in Linear',
      );
    }
  }

  // ---- agent sessions ---------------------------------------------------------------------------------------------

  async #created(event: Extract<LinearEvent, { type: 'agentSession.created' }>): Promise<void> {
    const { pipeline, claims, clock, logger } = this.#d;
    const { agentSessionId } = event;
    const key = eventKey(event);
    // One agent session, one piece of work: Linear may send `created` again long after (a new delivery id), and a
    // crash may run it again; once the session has a dispatch (whatever its status), nothing new starts.
    const existing = await pipeline.forAgentSession(agentSessionId);
    if (existing) {
      logger.info(
        { agentSession: agentSessionId, dispatch: existing.id, status: existing.status },
        'linear agent session already has its dispatch; nothing new started',
      );
      // A re-run after a crash right after the dispatch was recorded: its first thought may not have gone out.
      await pipeline.announce(existing);
      return;
    }
    const issueId = event.issue?.id;
    if (!issueId) {
      await this.#notOnIssue(agentSessionId, `${key}/no-issue`);
      return;
    }
    const body = event.comment?.body ?? '';
    const command = plannerCommand(body);
    if (command === 'start' || (await this.#comments.planning(issueId))) {
      await this.#comments.toPlanner({
        issueId,
        commentId: event.comment?.id ?? null,
        body,
        command,
        agentSessionId,
        author: event.creator?.name ?? null,
        owner: 'planner',
      });
      return;
    }
    // This session answers its comment: the Comment webhook and a mention notification of it stand down.
    if (event.comment)
      await claims.claim(`comment:${event.comment.id}`, `agent-session:${agentSessionId}`, clock.now());
    const profile = this.#pipelineProfile(body ? extractMentions(body) : []);
    logger.info(
      { agentSession: agentSessionId, issue: event.issue?.identifier ?? issueId },
      'linear agent session: dispatching',
    );
    try {
      await pipeline.dispatch(issueId, {
        agentSessionId,
        effectKey: key,
        ...(body.trim() ? { prompt: body } : {}),
        ...(event.promptContext ? { promptContext: event.promptContext } : {}),
        guidance: event.guidance,
        ...(profile ? { profile } : {}),
      });
    } catch (error) {
      throw new AlreadyReported(error);
    }
  }

  async #prompted(event: Extract<LinearEvent, { type: 'agentSession.prompted' }>): Promise<void> {
    const { planner, pipeline, claims, clock, logger } = this.#d;
    const { agentSessionId } = event;
    const command = plannerCommand(event.body);
    const session = await planner.activeForAgentSession(agentSessionId);
    const issueId = event.issue?.id ?? session?.issueId;
    if (issueId && (session || (await this.#comments.planning(issueId)) || command === 'start')) {
      await this.#comments.toPlanner({
        issueId,
        commentId: event.sourceCommentId,
        activityId: event.activityId,
        body: event.body,
        command,
        agentSessionId,
        author: event.author?.name ?? null,
        owner: 'planner',
      });
      return;
    }
    const key = `prompt:${event.activityId}`;
    // A reply while the worker waits for an approval decides it instead of reaching the worker as a prompt.
    const by = linearDecider(event.author);
    if (await this.#d.approvals?.reply({ agentSessionId, key, text: event.body, by })) {
      if (event.sourceCommentId)
        await claims.claim(`comment:${event.sourceCommentId}`, `agent-session:${agentSessionId}`, clock.now());
      return;
    }
    if (await claims.owner(key)) {
      logger.info(
        { agentSession: agentSessionId, activity: event.activityId },
        'linear prompt already handled (redelivery)',
      );
      return;
    }
    if (event.sourceCommentId)
      await claims.claim(`comment:${event.sourceCommentId}`, `agent-session:${agentSessionId}`, clock.now());
    const result = await pipeline.onPrompt(agentSessionId, event.body, event.activityId);
    // Crash tests: the prompt is taken in, its claim not yet recorded (the delivery runs again after a restart).
    faultPoint('linear.router.after-prompt');
    if (result.outcome === 'unknown') {
      if (!issueId) {
        await this.#notOnIssue(agentSessionId, `${key}/no-issue`);
      } else {
        // No dispatch belongs to this session yet (it was refused or never started): the message starts one.
        try {
          await pipeline.dispatch(issueId, {
            agentSessionId,
            prompt: event.body,
            effectKey: key,
            promptId: event.activityId,
          });
        } catch (error) {
          throw new AlreadyReported(error);
        }
      }
    }
    await claims.claim(key, 'pipeline', clock.now());
  }

  async #stop(event: Extract<LinearEvent, { type: 'agentSession.stop' }>): Promise<void> {
    const { pipeline, api, logger, effects } = this.#d;
    const key = eventKey(event);
    const cancelled = await this.jobs.cancelForSession(event.agentSessionId);
    const result = await pipeline.onStop(event.agentSessionId, key);
    if (result.outcome !== 'unknown') return;
    const planning = cancelled.some((j) => j.kind === JOB.planTurn || j.kind === JOB.planStart);
    const body =
      cancelled.length === 0
        ? 'Nothing was running for this session.'
        : planning
          ? 'Stopped the planning turn. Planning mode stays on until you say "abandon planning".'
          : 'Stopped.';
    try {
      await effects.run(`${key}/response`, 'keyed', (id) =>
        api.createAgentActivity(event.agentSessionId, { type: 'response', body }, { id }),
      );
    } catch (error) {
      logger.warn({ err: errorMessage(error), agentSession: event.agentSessionId }, 'linear: could not confirm a stop');
    }
  }

  // ---- issues and notifications -----------------------------------------------------------------------------------

  async #issueCreated(issueId: string, identifier: string): Promise<void> {
    const { config, triage, logger } = this.#d;
    if (!config.linear.triage.enabled) return;
    if (!triage.active) {
      logger.info({ issue: identifier }, 'linear triage skipped: no inference provider is configured');
      return;
    }
    await this.jobs.enqueue({
      key: `triage:${issueId}`,
      kind: JOB.triage,
      serialKey: `issue:${issueId}`,
      payload: { issueId, identifier },
    });
  }

  /**
   * An assignment (or delegation) to the app: one agent session and one dispatch per assignment, whichever webhook
   * reports it first; the other report (within `assignmentPairWindowSec`) and redeliveries do nothing new.
   */
  async #assigned(issueId: string, source: AssignmentSource, deliveryId: string): Promise<void> {
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

  async #notification(event: Extract<LinearEvent, { type: 'appUserNotification' }>): Promise<void> {
    const { config, clock, logger } = this.#d;
    const issueId = event.issue?.id;
    if (event.action === 'issueAssignedToYou' && issueId) {
      await this.#assigned(issueId, 'notification', event.deliveryId);
      return;
    }
    if ((event.action === 'issueCommentMention' || event.action === 'issueNewComment') && issueId && event.comment) {
      const { created } = await this.jobs.enqueue({
        key: `notification-mention:${event.comment.id}`,
        kind: JOB.notificationMention,
        serialKey: `comment:${event.comment.id}`,
        runAt: clock.now() + config.linear.mentions.notificationDelaySec * 1000,
        payload: {
          issueId,
          commentId: event.comment.id,
          body: event.comment.body,
          author: event.actor?.name ?? null,
          addressed: event.action === 'issueCommentMention',
        },
      });
      if (created)
        logger.info(
          { comment: event.comment.id, action: event.action },
          'linear notification: comment routed after the notification delay',
        );
      return;
    }
    logger.info(
      { action: event.action, issue: event.issue?.identifier ?? issueId ?? null },
      'linear notification needs nothing from switchboard',
    );
  }

  // ---- helpers ----------------------------------------------------------------------------------------------------

  async #notOnIssue(agentSessionId: string, key: string): Promise<void> {
    const body = 'This agent session is not on an issue; switchboard works on issues.';
    await this.#d.effects.run(key, 'keyed', (id) =>
      this.#d.api.createAgentActivity(agentSessionId, { type: 'error', body }, { id }),
    );
  }

  /** A pipeline profile named by the comment's mentions (a linear.profiles alias whose name is a pipeline profile). */
  #pipelineProfile(mentions: readonly string[]): string | null {
    const name = profileForMentions(mentions, this.#d.config.linear.profiles);
    return name && this.#d.config.linear.pipeline.profiles[name] ? name : null;
  }
}
