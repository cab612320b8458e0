// Agent-session events from Linear: `created` starts one dispatch per session (or hands the session to the planner on
// a planning issue), `prompted` is a reply to a pending approval, a planner message, or a prompt for the session's
// dispatch (starting one when it has none), and `stop` stops the dispatch or cancels the session's queued jobs. A
// comment that opened or fed a session is claimed for it, so its Comment webhook and mention notification stand down;
// a prompt handled once (claim `prompt:<activity>`) is not taken again on a redelivery.
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import { errorMessage } from '../core/errors.ts';
import { faultPoint } from '../core/fault.ts';
import type { Logger } from '../core/logger.ts';
import type { LinearClaimStore } from '../store/linear-claims.ts';
import type { LinearApi } from './api/types.ts';
import { linearDecider } from './approval-replies.ts';
import type { LinearApprovals } from './approvals-bridge.ts';
import type { CommentRouting } from './comment-routing.ts';
import type { LinearEffects } from './effects.ts';
import { AlreadyReported } from './event-failures.ts';
import { eventKey } from './event-keys.ts';
import type { JobRunner } from './jobs.ts';
import { profileForMentions } from './mentions.ts';
import type { Pipeline } from './pipeline/pipeline.ts';
import type { Planner } from './planner/planner.ts';
import { plannerCommand } from './planner/prompts.ts';
import { JOB } from './router-jobs.ts';
import type { LinearEvent } from './webhooks/events.ts';
import { extractMentions } from './webhooks/parse.ts';

type EventOf<T extends LinearEvent['type']> = Extract<LinearEvent, { type: T }>;

/** What agent-session routing is built from: only the calls it makes on each. */
export interface AgentSessionRoutingDeps {
  config: Pick<Config, 'linear'>;
  api: Pick<LinearApi, 'createAgentActivity'>;
  pipeline: Pick<Pipeline, 'dispatch' | 'onPrompt' | 'onStop' | 'forAgentSession' | 'announce'>;
  planner: Pick<Planner, 'activeForAgentSession'>;
  /** Where planning sessions' messages go (the planner, as durable jobs). */
  comments: Pick<CommentRouting, 'planning' | 'toPlanner'>;
  claims: Pick<LinearClaimStore, 'claim' | 'owner'>;
  /** A stop cancels the session's queued and running jobs (planner turns). */
  jobs: Pick<JobRunner, 'cancelForSession'>;
  effects: Pick<LinearEffects, 'run'>;
  /** Workers' approvals: a reply while one is pending decides it. */
  approvals?: Pick<LinearApprovals, 'reply'> | null;
  clock: Clock;
  logger: Logger;
}

/** Routes `agentSession.*` events (see the file comment). */
export class AgentSessionRouting {
  readonly #d: AgentSessionRoutingDeps;

  constructor(deps: AgentSessionRoutingDeps) {
    this.#d = deps;
  }

  /**
   * A new agent session: nothing new when it already has a dispatch (its first thought is announced again), the
   * planner for a planning issue or "plan this project", otherwise one dispatch. Rejects with `AlreadyReported` when
   * the pipeline refused it (and said so).
   */
  async created(event: EventOf<'agentSession.created'>): Promise<void> {
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
    if (command === 'start' || (await this.#d.comments.planning(issueId))) {
      await this.#d.comments.toPlanner({
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

  /**
   * A message in an agent session: to the planner (planning session or issue, or "plan this project"), to a pending
   * approval, or to the pipeline once per activity (claim `prompt:<activity>`, taken after the pipeline has it),
   * starting a dispatch when the session has none. Rejects with `AlreadyReported` when that dispatch was refused.
   */
  async prompted(event: EventOf<'agentSession.prompted'>): Promise<void> {
    const { pipeline, claims, clock, logger } = this.#d;
    const { agentSessionId } = event;
    const command = plannerCommand(event.body);
    const session = await this.#d.planner.activeForAgentSession(agentSessionId);
    const issueId = event.issue?.id ?? session?.issueId;
    if (issueId && (session || (await this.#d.comments.planning(issueId)) || command === 'start')) {
      await this.#d.comments.toPlanner({
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

  /**
   * The stop signal: cancels the session's jobs and stops its dispatch; with no dispatch, one response (keyed
   * `<eventKey>/response`) says what was stopped. A failure to say it is logged.
   */
  async stop(event: EventOf<'agentSession.stop'>): Promise<void> {
    const { pipeline, api, logger, effects } = this.#d;
    const key = eventKey(event);
    const cancelled = await this.#d.jobs.cancelForSession(event.agentSessionId);
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
