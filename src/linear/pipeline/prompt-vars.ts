// The template variables of the pipeline's prompts and the texts it writes for people (summary, plan).
import type { LinearPipelineConfig } from '../../core/config-linear-pipeline.ts';
import type { DispatchRecord } from '../../store/linear-dispatch-types.ts';
import type { LinearIssue } from '../api/types.ts';
import type { PromptSet } from './prompts.ts';
import { renderTemplate, sanitizePromptInput, withVerdictInstruction } from './prompts.ts';
import type { Verdict } from './verdict.ts';

const MAX_COMMENT_CHARS = 1_000;

/** `- a\n- b`, or `(none)`. Pure. */
export function bullets(items: readonly string[]): string {
  return items.length > 0 ? items.map((i) => `- ${i.replace(/\n/g, '\n  ')}`).join('\n') : '(none)';
}

/** The attempt number within the current round (1…maxAttempts), as prompts and messages show it. */
export function roundAttempt(d: Pick<DispatchRecord, 'attempt' | 'roundStart'>): number {
  return d.attempt - d.roundStart + 1;
}

/**
 * Every `{{var}}` the prompts can use. User text (title, description, comments, guidance, messages, gaps, the
 * worker's report) is sanitized: cut to `promptInputMaxChars`, `{{` neutralised. Pure.
 */
export function promptVars(
  d: DispatchRecord,
  issue: LinearIssue,
  prompts: PromptSet,
  pc: Pick<LinearPipelineConfig, 'maxAttempts' | 'promptInputMaxChars'>,
  extra: { workerReport?: string } = {},
): Record<string, string> {
  const clean = (text: string): string => sanitizePromptInput(text, pc.promptInputMaxChars);
  const comments = issue.comments.map((c) => {
    const body = c.body.length > MAX_COMMENT_CHARS ? `${c.body.slice(0, MAX_COMMENT_CHARS)}…` : c.body;
    return `${c.user?.name ?? 'someone'}: ${body}`;
  });
  return {
    identifier: d.identifier,
    title: clean(issue.title),
    description: clean(issue.description.trim() || '(no description)'),
    url: issue.url,
    branch: d.branch,
    worktreePath: d.worktreePath ?? '',
    tier: d.tier,
    tierHint: prompts.tiers[d.tier],
    attempt: String(roundAttempt(d)),
    maxAttempts: String(pc.maxAttempts),
    projectContext: issue.project ? clean(issue.project.name) : '(none)',
    teamContext: `${clean(issue.team.name)} (${issue.team.key})`,
    teamKey: issue.team.key,
    guidance: clean(bullets(d.context.guidance ?? [])),
    comments: clean(bullets(comments)),
    userMessages: clean(bullets(d.context.userMessages ?? [])),
    promptContext: clean(d.context.promptContext ?? ''),
    gaps: clean(bullets(d.context.lastGaps ?? [])),
    harness: d.harness,
    model: d.model ?? 'default',
    workerReport: clean(extra.workerReport?.trim() || '(the worker wrote no report)'),
  };
}

/** The worker's system prompt and task; the rework addendum is added while the last audit's gaps are open. Pure. */
export function workerPrompt(
  prompts: PromptSet,
  vars: Record<string, string>,
  hasGaps: boolean,
): { system: string; task: string } {
  const task = renderTemplate(prompts.worker.task, vars);
  return {
    system: renderTemplate(prompts.worker.system, vars),
    task: hasGaps ? `${task}\n\n${renderTemplate(prompts.rework.addendum, vars)}` : task,
  };
}

/** The auditor's system prompt and task, the task always ending with the verdict instruction. Pure. */
export function auditPrompt(prompts: PromptSet, vars: Record<string, string>): { system: string; task: string } {
  return {
    system: renderTemplate(prompts.audit.system, vars),
    task: withVerdictInstruction(renderTemplate(prompts.audit.task, vars)),
  };
}

/** summary.md and the one response posted when a dispatch passes its audit. Pure. */
export function doneSummary(d: DispatchRecord, verdict: Verdict, workerReport: string): string {
  const model = d.model ? ` ${d.model}` : '';
  const report = workerReport.trim();
  const shortReport = report.length > 1_500 ? `…${report.slice(-1_500)}` : report;
  return [
    `**${d.identifier} is done**: the independent audit passed on attempt ${roundAttempt(d)} (tier ${d.tier}, ${d.harness}${model}).`,
    '',
    '**Criteria**',
    bullets(verdict.criteria),
    '',
    `**Tests:** ${verdict.testResults || 'not reported'}`,
    '',
    '**Worker summary**',
    shortReport || '(none)',
    '',
    `Branch \`${d.branch}\`${d.worktreePath ? ` in \`${d.worktreePath}\`` : ''}.`,
  ].join('\n');
}

/** plan.md: what the worker of an attempt was asked to do. Pure. */
export function planText(d: DispatchRecord, system: string, task: string): string {
  return [
    `# ${d.identifier}: ${d.title}`,
    '',
    `Attempt ${roundAttempt(d)} (overall ${d.attempt}) · tier ${d.tier} (${d.tierReason}) · ${d.harness}${d.model ? ` ${d.model}` : ''}`,
    '',
    '## Instructions',
    system,
    '',
    '## Task',
    task,
    '',
  ].join('\n');
}
