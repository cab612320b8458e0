// What a new dispatch of an issue will be: the repository it runs in, its tier and runners (harness and model of the
// worker and the auditor), its first context and the row stored for it. Pure: the intake reads the issue, asks Linear
// for an agent session and stores the row (dispatch-intake.ts).
import { resolve } from 'node:path';
import type { Config } from '../../core/config.ts';
import type { LinearPipelineConfig } from '../../core/config-linear-pipeline.ts';
import { expandHome } from '../../core/config-load.ts';
import { invalidInput } from '../../core/errors.ts';
import type { DispatchContextData, NewDispatch } from '../../store/linear-dispatch-types.ts';
import type { LinearIssue } from '../api/types.ts';
import { sanitizePromptInput } from './prompts.ts';
import type { RunnerChoice, TierDecision } from './tier.ts';
import { assessTier, chooseRunners } from './tier.ts';
import type { DispatchContext } from './types.ts';

/** What a plan reads: the pipeline's section and the daemon's default harness and workdir. */
export interface PlanSettings {
  pc: LinearPipelineConfig;
  config: Pick<Config, 'defaultHarness' | 'defaultWorkdir'>;
}

/** Where and by whom an issue's dispatch runs. */
export interface DispatchPlan {
  /** The repository (absolute path) of the issue's team. */
  repoPath: string;
  tier: TierDecision;
  runners: RunnerChoice;
}

/**
 * The repository of the issue's team (`teamRepos`, else `repo`, else `defaultWorkdir`), its tier and its runners (the
 * agent profile `profile`, when named, must exist). Throws invalid_input for a team without a repository.
 */
export function planDispatch(issue: LinearIssue, profile: string | undefined, s: PlanSettings): DispatchPlan {
  const { pc } = s;
  const repoPath = repoFor(issue, s);
  const tier = assessTier(issue, pc.tierRules);
  const runners = chooseRunners({
    tier: tier.tier,
    labels: issue.labels,
    profile: profile ? pc.profiles[profile] : undefined,
    pipeline: pc,
    defaultHarness: s.config.defaultHarness,
  });
  return { repoPath, tier, runners };
}

/**
 * The row of a new dispatch (`id`, created at `now`): the plan, the agent session to report to (null: comments), and a
 * first context made of what came with the request (texts sanitized and capped) and the "Picked up" thought.
 */
export function newDispatchRow(options: {
  id: string;
  issue: LinearIssue;
  ctx: DispatchContext;
  plan: DispatchPlan;
  agentSessionId: string | null;
  pc: Pick<LinearPipelineConfig, 'promptInputMaxChars'>;
  now: number;
}): NewDispatch {
  const { id, issue, ctx, plan, agentSessionId, pc, now } = options;
  const { tier, runners } = plan;
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
  return {
    id,
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
    repoPath: plan.repoPath,
    branch: issue.branchName.trim() || issue.identifier.toLowerCase(),
    context,
    createdAt: now,
  };
}

function repoFor(issue: LinearIssue, s: PlanSettings): string {
  const { pc } = s;
  const repo = pc.teamRepos[issue.team.key] ?? pc.repo ?? s.config.defaultWorkdir;
  if (!repo) {
    throw invalidInput(
      `linear.pipeline.repo: no repository is configured for team ${issue.team.key} (set linear.pipeline.repo or linear.pipeline.teamRepos.${issue.team.key})`,
      'linear.pipeline.repo',
    );
  }
  return resolve(expandHome(repo));
}
