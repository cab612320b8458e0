// Where a comment (or a message in a planning agent session) goes: an @mention of an agent profile to a mention answer,
// "plan this project" to the planner, any comment on a planning issue to an interview turn, a comment addressed to the
// app and reported only by a notification to the default answerer. The first path to claim a comment acts; the work
// itself is queued as a durable job.
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import { errorMessage } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { LinearClaimStore } from '../store/linear-claims.ts';
import type { LinearJobStore } from '../store/linear-jobs.ts';
import type { LinearApi } from './api/types.ts';
import type { LinearEffects } from './effects.ts';
import type { JobRunner } from './jobs.ts';
import { profileForMentions } from './mentions.ts';
import type { Planner } from './planner/planner.ts';
import type { PlannerCommand } from './planner/prompts.ts';
import { plannerCommand } from './planner/prompts.ts';
import type { ReplyTarget } from './reply.ts';
import { postReply } from './reply.ts';
import type { NotificationMentionJob } from './router-jobs.ts';
import { JOB } from './router-jobs.ts';
import { extractMentions } from './webhooks/parse.ts';

/** A comment as it is routed, from the Comment webhook or from an AppUserNotification. */
export interface RoutedComment {
  issueId: string;
  commentId: string;
  parentId: string | null;
  body: string;
  mentions: string[];
  author: string | null;
  /** `comment`: the Comment webhook; `notification`: an AppUserNotification (after its delay). */
  via: 'comment' | 'notification';
  /** The comment addresses the app itself (mentions one of its handles, or Linear said so). */
  addressed: boolean;
}

/** A message for the planner. */
export interface PlannerRoute {
  issueId: string;
  commentId: string | null;
  activityId?: string;
  parentId?: string | null;
  body: string;
  command: PlannerCommand;
  agentSessionId: string | null;
  author: string | null;
  /** Claim owner: paths that may report the same comment use different owners, so only one of them acts. */
  owner: string;
}

export interface CommentRoutingDeps {
  config: Config;
  api: LinearApi;
  planner: Planner;
  claims: LinearClaimStore;
  jobStore: LinearJobStore;
  jobs: JobRunner;
  /** What is said in an agent session about a routed message is said once per message (keyed effects). */
  effects: LinearEffects;
  clock: Clock;
  logger: Logger;
}

/** Routes comments and planner messages (see the file comment). */
export class CommentRouting {
  #d: CommentRoutingDeps;

  constructor(deps: CommentRoutingDeps) {
    this.#d = deps;
  }

  /** Routes one comment; resolves once its work is claimed and queued (or it needs nothing). */
  async route(c: RoutedComment): Promise<void> {
    const { config, logger } = this.#d;
    const profile = profileForMentions(c.mentions, config.linear.profiles);
    const command = plannerCommand(c.body);
    const toPlanner = (): Promise<void> =>
      this.toPlanner({
        issueId: c.issueId,
        commentId: c.commentId,
        parentId: c.parentId,
        body: c.body,
        command,
        agentSessionId: null,
        author: c.author,
        owner: this.#owner(c, 'planner'),
      });
    if (command === 'start' && c.addressed) return toPlanner();
    if (profile) return this.#mention(c, profile);
    if (await this.planning(c.issueId)) return toPlanner();
    if (c.via === 'notification' && c.addressed) return this.#mention(c, null);
    logger.debug({ comment: c.commentId, via: c.via }, 'linear comment needs nothing from switchboard');
  }

  /** A comment reported by an AppUserNotification, routed after its delay (unless another path took it meanwhile). */
  async routeNotification(job: NotificationMentionJob): Promise<void> {
    const mentions = extractMentions(job.body);
    await this.route({
      issueId: job.issueId,
      commentId: job.commentId,
      parentId: null,
      body: job.body,
      mentions,
      author: job.author,
      via: 'notification',
      addressed: job.addressed || this.addressesApp(mentions, await this.appHandles()),
    });
  }

  /** True while the issue is a planning issue, or a "plan this project" on it is queued or running. */
  async planning(issueId: string): Promise<boolean> {
    return (
      (await this.#d.planner.activeForIssue(issueId)) !== null ||
      (await this.#d.jobStore.hasOpen(`plan-issue:${issueId}`, JOB.planStart))
    );
  }

  /**
   * Hands a message to the planner (start or interview turn) as a durable job, claiming its comment first. From an
   * agent session, a thought goes out at once (Linear wants the first activity within 10 s).
   */
  async toPlanner(route: PlannerRoute): Promise<void> {
    const { claims, clock, api, logger, jobs, effects } = this.#d;
    const won = route.commentId ? await claims.claim(`comment:${route.commentId}`, route.owner, clock.now()) : true;
    const source = route.commentId
      ? `comment:${route.commentId}`
      : `activity:${route.activityId ?? route.agentSessionId ?? 'none'}`;
    const said = effects.scope(`planner:${source}`);
    const agentSessionId = route.agentSessionId;
    if (agentSessionId) {
      const thought = route.command === 'start' ? 'Starting planning mode for this project…' : 'Working on the plan…';
      await said
        .run('ack', 'keyed', (id) =>
          api.createAgentActivity(agentSessionId, { type: 'thought', body: thought }, id ? { id } : {}),
        )
        .catch((error: unknown) =>
          logger.warn({ err: errorMessage(error), agentSession: agentSessionId }, 'linear: could not post a thought'),
        );
    }
    if (!won) {
      logger.info({ comment: route.commentId, owner: route.owner }, 'linear comment already taken by another path');
      if (agentSessionId) {
        await said.run('already-handled', 'at-most-once', () =>
          postReply(
            api,
            logger,
            { kind: 'session', agentSessionId, issueId: route.issueId },
            'This message is already being handled in the comment thread.',
            'response',
          ),
        );
      }
      return;
    }
    const reply: ReplyTarget = route.agentSessionId
      ? { kind: 'session', agentSessionId: route.agentSessionId, issueId: route.issueId }
      : { kind: 'comment', issueId: route.issueId, ...(route.parentId ? { parentId: route.parentId } : {}) };
    // Starts and turns of one planning issue run in order: a comment right after "plan this project" waits for it.
    const serialKey = `plan-issue:${route.issueId}`;
    if (route.command === 'start' || !(await this.planning(route.issueId))) {
      await jobs.enqueue({
        key: `plan-start:${source}`,
        kind: JOB.planStart,
        serialKey,
        agentSessionId: route.agentSessionId,
        payload: { issueId: route.issueId, reply, agentSessionId: route.agentSessionId, author: route.author },
      });
      return;
    }
    await jobs.enqueue({
      key: `plan-turn:${source}`,
      kind: JOB.planTurn,
      serialKey,
      agentSessionId: route.agentSessionId,
      payload: {
        issueId: route.issueId,
        text: route.body,
        command: route.command,
        reply,
        agentSessionId: route.agentSessionId,
        author: route.author,
      },
    });
  }

  /** The handles that address the app: linear.mentions.appAliases and its Linear user name. */
  async appHandles(): Promise<string[]> {
    const handles = [...this.#d.config.linear.mentions.appAliases];
    try {
      const viewer = await this.#d.api.viewer();
      handles.push(viewer.name.toLowerCase().replace(/\s+/g, ''));
    } catch (error) {
      this.#d.logger.warn(
        { err: errorMessage(error) },
        'linear: could not read the app user; using linear.mentions.appAliases only',
      );
    }
    return handles;
  }

  addressesApp(mentions: readonly string[], handles: readonly string[]): boolean {
    return mentions.some((m) => handles.includes(m.toLowerCase()));
  }

  /** The claim owner of a path: the Comment webhook and the agent session share `planner`; a notification is its own. */
  #owner(c: RoutedComment, what: string): string {
    return c.via === 'notification' ? 'notification' : what;
  }

  async #mention(c: RoutedComment, profile: string | null): Promise<void> {
    const { claims, clock, logger, jobs } = this.#d;
    const owner = this.#owner(c, `mention:${profile ?? 'default'}`);
    if (!(await claims.claim(`comment:${c.commentId}`, owner, clock.now()))) {
      logger.info(
        { comment: c.commentId, owner, holder: await claims.owner(`comment:${c.commentId}`) },
        'linear comment already answered by another path',
      );
      return;
    }
    await jobs.enqueue({
      key: `mention:${c.commentId}`,
      kind: JOB.mention,
      serialKey: `comment:${c.commentId}`,
      payload: {
        issueId: c.issueId,
        commentId: c.commentId,
        threadId: c.parentId ?? c.commentId,
        body: c.body,
        author: c.author,
        profile,
      },
    });
  }
}
