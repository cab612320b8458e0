import type { Kysely } from 'kysely';
// The project planner: a durable interview state machine (interviewing → plan_review → approved, or back to
// interviewing with the audit's findings; abandoned), one model turn with the five planner tools per user message,
// and the guard that keeps the pipeline from dispatching issues of a project while it is being planned.
import type { Clock } from '../../core/clock.ts';
import type { LinearPlannerConfig } from '../../core/config-linear-agents.ts';
import { errorMessage } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import type { Logger } from '../../core/logger.ts';
import { runAgentLoop } from '../../engine/agent-loop.ts';
import { runToolCall } from '../../engine/tool.ts';
import type { ChatMessage, Inference } from '../../inference/types.ts';
import type { PlanningMessage, PlanningSession } from '../../store/linear-planning.ts';
import { ACTIVE_PLANNING_STATUSES, PlanningStore } from '../../store/linear-planning.ts';
import type { Database } from '../../store/tables/index.ts';
import type { LinearApi, LinearIssue } from '../api/types.ts';
import { sanitizePromptInput } from '../pipeline/prompts.ts';
import type { ReplyTarget } from '../reply.ts';
import { postReply } from '../reply.ts';
import { formatAudit } from './audit.ts';
import { transitionPlanning } from './planning-transitions.ts';
import { plannerText } from './prompts.ts';
import type { PlannerToolContext } from './tools.ts';
import { formatProjectTree, PLANNER_TOOLS, projectAudit } from './tools.ts';

/** The answer dispatch gets for an issue of a project in planning mode (the seed's wording). */
export const PLANNING_BLOCK_MESSAGE =
  'This project is in planning mode. Finalize the plan before dispatching implementation.';

/** User text in planner prompts is cut to this many characters. */
const MAX_INPUT_CHARS = 4_000;

export interface PlannerDeps {
  api: LinearApi;
  db: Kysely<Database>;
  /** Absent or unavailable: interview turns answer that no provider is configured (commands still work). */
  inference?: Inference;
  config: LinearPlannerConfig;
  clock: Clock;
  logger: Logger;
}

/** What started or continues a planning session. */
export interface PlannerRequest {
  /** Where the answer goes. */
  reply: ReplyTarget;
  /** The Linear agent session it came from, if any (the planning session reports there). */
  agentSessionId?: string | null;
  author?: string | null;
}

/** What one call did (for logs and tests). */
export type PlannerOutcome =
  | { outcome: 'started' | 'already' | 'no_project' | 'disabled'; session?: PlanningSession }
  | {
      outcome:
        'turn' | 'approved' | 'audit_failed' | 'abandoned' | 'not_interviewing' | 'no_inference' | 'failed' | 'stopped';
      session: PlanningSession;
    };

/** The planner; one per daemon. */
export class Planner {
  readonly store: PlanningStore;
  #d: PlannerDeps;

  constructor(deps: PlannerDeps) {
    this.#d = deps;
    this.store = new PlanningStore(deps.db);
  }

  /** The pipeline's guard: the reason an issue must not be dispatched now (its project is being planned), or null. */
  async isBlocked(issue: Pick<LinearIssue, 'project'>): Promise<string | null> {
    if (!issue.project) return null;
    return (await this.store.activeForProject(issue.project.id)) ? PLANNING_BLOCK_MESSAGE : null;
  }

  /** The planning session in progress whose planning issue is `issueId`. */
  activeForIssue(issueId: string): Promise<PlanningSession | null> {
    return this.store.activeForIssue(issueId);
  }

  /** The planning session in progress that reports to `agentSessionId`. */
  async activeForAgentSession(agentSessionId: string): Promise<PlanningSession | null> {
    const session = await this.store.forAgentSession(agentSessionId);
    return session && ACTIVE_PLANNING_STATUSES.includes(session.status) ? session : null;
  }

  /**
   * "plan this project" on `issueId`: starts a planning session for the issue's project (one per project) and posts
   * the welcome with the project's current tree. Answers instead when the issue has no project, the planner is off,
   * or the project is already being planned.
   */
  async start(issueId: string, request: PlannerRequest): Promise<PlannerOutcome> {
    const { api, config, clock, logger } = this.#d;
    const issue = await api.getIssue(issueId);
    if (!config.enabled) {
      await this.#reply(request.reply, 'The project planner is turned off (linear.planner.enabled).', 'error');
      return { outcome: 'disabled' };
    }
    if (!issue.project) {
      await this.#reply(request.reply, plannerText('noProject', { identifier: issue.identifier }), 'error');
      return { outcome: 'no_project' };
    }
    const { session, created } = await this.store.create(
      {
        id: newId(12),
        projectId: issue.project.id,
        projectName: issue.project.name,
        issueId: issue.id,
        issueIdentifier: issue.identifier,
        teamId: issue.team.id,
        agentSessionId: request.agentSessionId ?? null,
        createdBy: request.author ?? null,
      },
      clock.now(),
    );
    if (!created) {
      await this.#reply(
        request.reply,
        plannerText('already', {
          projectName: session.projectName,
          rootIdentifier: session.issueIdentifier,
          status: session.status,
        }),
        'response',
      );
      return { outcome: 'already', session };
    }
    logger.info(
      { planning: session.id, project: session.projectName, issue: issue.identifier },
      'planner: planning mode on',
    );
    const project = await api.getProject(session.projectId);
    await this.#reply(
      request.reply,
      plannerText('welcome', {
        projectName: session.projectName,
        rootIdentifier: session.issueIdentifier,
        planSnapshot: formatProjectTree(project),
      }),
      'elicitation',
    );
    return { outcome: 'started', session };
  }

  /**
   * One message of the person on the planning issue (or in its agent session): "finalize plan" audits (approved, or
   * back to interviewing with the findings), "abandon" / "cancel planning" ends it, anything else is one interview
   * turn of the model with the planner tools. `signal` aborts a running turn (stop from Linear).
   */
  async turn(
    planningId: string,
    text: string,
    command: 'finalize' | 'abandon' | 'message',
    request: PlannerRequest,
    signal?: AbortSignal,
  ): Promise<PlannerOutcome> {
    const session = await this.store.get(planningId);
    if (!session) throw new Error(`no planning session ${planningId}`);
    if (session.status === 'plan_review') return this.review(session, request.reply);
    if (session.status !== 'interviewing') {
      await this.#reply(
        request.reply,
        plannerText('notInterviewing', { projectName: session.projectName, status: session.status }),
        'response',
      );
      return { outcome: 'not_interviewing', session };
    }
    if (request.agentSessionId && request.agentSessionId !== session.agentSessionId)
      await this.store.update(session.id, { agentSessionId: request.agentSessionId }, this.#d.clock.now());
    if (command === 'abandon') return this.#abandon(session, request.reply);
    if (command === 'finalize') {
      const review = await transitionPlanning(
        this.store,
        session.id,
        'interviewing',
        'plan_review',
        this.#d.clock.now(),
      );
      if (!review) return this.turn(planningId, text, command, request, signal);
      return this.review(review, request.reply);
    }
    return this.#interview(session, text, request, signal);
  }

  /**
   * Audits a session in plan_review (also after a restart cut one off: see `recover`): approved with the tree when
   * the audit passes, else back to interviewing with the findings.
   */
  async review(session: PlanningSession, reply: ReplyTarget): Promise<PlannerOutcome> {
    const { clock, logger, config } = this.#d;
    const { project, audit } = await projectAudit({
      api: this.#d.api,
      session,
      minDescriptionChars: config.minDescriptionChars,
    });
    if (audit.pass) {
      const approved = await transitionPlanning(this.store, session.id, 'plan_review', 'approved', clock.now(), {
        lastAudit: [],
      });
      if (!approved) return { outcome: 'not_interviewing', session };
      logger.info({ planning: session.id, project: session.projectName }, 'planner: plan approved');
      await this.#reply(
        reply,
        plannerText('approved', {
          projectName: session.projectName,
          issueCount: String(audit.checked),
          planSnapshot: formatProjectTree(project),
        }),
        'response',
      );
      return { outcome: 'approved', session: approved };
    }
    const findings = audit.findings.map((f) => f.message);
    const back = await transitionPlanning(this.store, session.id, 'plan_review', 'interviewing', clock.now(), {
      lastAudit: findings,
    });
    if (!back) return { outcome: 'not_interviewing', session };
    logger.info(
      { planning: session.id, findings: audit.findings.length },
      'planner: audit failed; back to interviewing',
    );
    await this.#reply(reply, plannerText('auditFailed', { auditFindings: formatAudit(audit) }), 'elicitation');
    return { outcome: 'audit_failed', session: back };
  }

  /** After a restart: audits every session a crash left in plan_review (the audit is deterministic). */
  async recover(): Promise<void> {
    for (const session of (await this.store.list()).filter((s) => s.status === 'plan_review')) {
      const reply: ReplyTarget = session.agentSessionId
        ? { kind: 'session', agentSessionId: session.agentSessionId, issueId: session.issueId }
        : { kind: 'comment', issueId: session.issueId };
      try {
        await this.review(session, reply);
      } catch (error) {
        this.#d.logger.error(
          { err: errorMessage(error), planning: session.id },
          'planner: could not finish an interrupted review',
        );
      }
    }
  }

  /** Ends planning mode for a stop signal or an abandon message. */
  async #abandon(session: PlanningSession, reply: ReplyTarget): Promise<PlannerOutcome> {
    const done = await transitionPlanning(this.store, session.id, 'interviewing', 'abandoned', this.#d.clock.now());
    if (!done) return { outcome: 'not_interviewing', session };
    this.#d.logger.info({ planning: session.id, project: session.projectName }, 'planner: planning abandoned');
    await this.#reply(reply, plannerText('abandoned', { projectName: session.projectName }), 'response');
    return { outcome: 'abandoned', session: done };
  }

  async #interview(
    session: PlanningSession,
    text: string,
    request: PlannerRequest,
    signal?: AbortSignal,
  ): Promise<PlannerOutcome> {
    const { api, inference, config, clock, logger } = this.#d;
    if (!inference?.available) {
      await this.#reply(request.reply, plannerText('noInference', {}), 'error');
      return { outcome: 'no_inference', session };
    }
    const userText = sanitizePromptInput(text.trim(), MAX_INPUT_CHARS);
    const project = await api.getProject(session.projectId);
    let created = 0;
    const ctx: PlannerToolContext = {
      api,
      session,
      minDescriptionChars: config.minDescriptionChars,
      remainingIssues: () => config.maxIssues - session.issuesCreated - created,
      onCreated: () => void (created += 1),
    };
    const system = plannerText('system', {
      projectName: session.projectName,
      rootIdentifier: session.issueIdentifier,
      turnCount: String(session.turnCount + 1),
      minDescriptionChars: String(config.minDescriptionChars),
      planSnapshot: formatProjectTree(project),
      auditFindings:
        session.lastAudit && session.lastAudit.length > 0
          ? session.lastAudit.map((f) => `- ${f}`).join('\n')
          : '(none)',
    });
    const history: ChatMessage[] = session.history
      .slice(-config.maxHistoryMessages)
      .map((m) => ({ role: m.role, content: m.content }));
    const controller = new AbortController();
    const abort = (): void => controller.abort();
    signal?.addEventListener('abort', abort, { once: true });
    if (signal?.aborted) controller.abort();
    let result;
    try {
      result = await runAgentLoop({
        sessionId: `planner:${session.id}`,
        system,
        messages: [...history, { role: 'user', content: userText }],
        tools: PLANNER_TOOLS.map((t) => t.spec),
        maxIterations: config.maxToolIterations,
        signal: controller.signal,
        inference,
        runTool: (call) => runToolCall(PLANNER_TOOLS, ctx, call),
        record: (step) => {
          if (step.type === 'tool_result')
            logger.debug({ planning: session.id, tool: step.name, isError: step.isError }, 'planner tool');
        },
        onText: () => undefined,
      });
    } finally {
      signal?.removeEventListener('abort', abort);
    }
    const now = clock.now();
    if (result.outcome === 'abandoned' || signal?.aborted) {
      const stopped =
        (await this.store.update(session.id, { issuesCreated: session.issuesCreated + created }, now)) ?? session;
      return { outcome: 'stopped', session: stopped };
    }
    const answer = result.lastText?.trim() ?? '';
    const historyNext: PlanningMessage[] = [
      ...session.history,
      { role: 'user' as const, content: userText },
      ...(answer ? [{ role: 'assistant' as const, content: answer }] : []),
    ].slice(-config.maxHistoryMessages);
    const updated =
      (await this.store.update(
        session.id,
        { turnCount: session.turnCount + 1, issuesCreated: session.issuesCreated + created, history: historyNext },
        now,
      )) ?? session;
    if (result.outcome === 'error') {
      logger.error({ planning: session.id, err: result.error }, 'planner: interview turn failed');
      await this.#reply(
        request.reply,
        plannerText('failed', { error: result.failure ?? result.error ?? 'unknown error' }),
        'error',
      );
      return { outcome: 'failed', session: updated };
    }
    const note =
      result.outcome === 'limit'
        ? `\n\n(I stopped after ${config.maxToolIterations} tool rounds; tell me to continue.)`
        : '';
    await this.#reply(request.reply, `${answer || 'Done.'}${note}`, 'elicitation');
    return { outcome: 'turn', session: updated };
  }

  async #reply(target: ReplyTarget, body: string, kind: 'elicitation' | 'response' | 'error'): Promise<void> {
    await postReply(this.#d.api, this.#d.logger, target, body, kind);
  }
}
