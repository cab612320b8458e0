// Auto-triage of a new issue: the model proposes an estimate, labels (from the team's own) and a priority with a short
// assessment; the answer is parsed robustly, applied with one issueUpdate (never overriding what a person already
// set) and the assessment is posted as a comment.
import { z } from 'zod';
import type { LinearTriageConfig } from '../core/config-linear-agents.ts';
import { formatZodError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { Inference } from '../inference/types.ts';
import type { LinearApi, LinearIssue, LinearLabel, UpdateIssueInput } from './api/types.ts';
import type { EffectScope } from './effects.ts';
import { UNLEDGERED } from './effects.ts';
import { sanitizePromptInput } from './pipeline/prompts.ts';

const integerish = z.union([
  z.number(),
  z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?$/)
    .transform(Number),
]);

/** The model's answer (the reference's triage JSON); unknown extra keys are ignored. */
export const triageAnswerSchema = z
  .object({
    estimate: integerish.pipe(z.number().min(0)).nullable().optional(),
    labelIds: z.array(z.string().min(1)).default([]),
    priority: integerish.pipe(z.number().int().min(1).max(4)).nullable().optional(),
    assessment: z.string().trim().min(1, 'the assessment must not be empty'),
  })
  .loose();

export type TriageAnswer = z.infer<typeof triageAnswerSchema>;

/** The JSON objects in a text: fenced code blocks first, then every balanced {…} (strings respected), in order. */
export function jsonCandidates(text: string): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(/```(?:json)?\s*([\s\S]*?)```/g))
    if (match[1]?.trim().startsWith('{')) out.push(match[1].trim());
  for (let i = 0; i < text.length; i += 1) {
    if (text[i] !== '{') continue;
    let depth = 0;
    let inString = false;
    for (let j = i; j < text.length; j += 1) {
      const ch = text[j];
      if (inString) {
        if (ch === '\\') j += 1;
        else if (ch === '"') inString = false;
      } else if (ch === '"') inString = true;
      else if (ch === '{') depth += 1;
      else if (ch === '}') {
        depth -= 1;
        if (depth === 0) {
          out.push(text.slice(i, j + 1));
          i = j;
          break;
        }
      }
    }
  }
  return out;
}

/**
 * Parses the model's triage answer: the last JSON object in the text (fenced or bare) that matches the schema.
 * Returns the answer, or an error saying what was wrong with the best candidate.
 */
export function parseTriageAnswer(text: string): { ok: true; answer: TriageAnswer } | { ok: false; error: string } {
  const candidates = jsonCandidates(text);
  let error = 'no JSON object in the answer';
  for (const candidate of candidates.reverse()) {
    let value: unknown;
    try {
      value = JSON.parse(candidate);
    } catch {
      continue;
    }
    const parsed = triageAnswerSchema.safeParse(value);
    if (parsed.success) return { ok: true, answer: parsed.data };
    error = formatZodError(parsed.error);
  }
  return { ok: false, error };
}

/** The allowed estimate closest to `value` (ties go to the smaller). */
export function snapEstimate(value: number, allowed: readonly number[]): number {
  return [...allowed].sort((a, b) => Math.abs(a - value) - Math.abs(b - value) || a - b)[0] ?? value;
}

/**
 * What to write to the issue: the estimate and priority only where the issue has none yet, labels added to the ones
 * it has (known team labels only, at most `maxLabels` new). Empty when there is nothing to change.
 */
export function triageUpdate(
  issue: LinearIssue,
  answer: TriageAnswer,
  teamLabels: readonly LinearLabel[],
  config: LinearTriageConfig,
): UpdateIssueInput {
  const update: UpdateIssueInput = {};
  if (issue.estimate === null && answer.estimate !== null && answer.estimate !== undefined)
    update.estimate = snapEstimate(answer.estimate, config.estimates);
  if (!(issue.priority > 0) && answer.priority !== null && answer.priority !== undefined)
    update.priority = answer.priority;
  const known = new Set(teamLabels.map((l) => l.id));
  const have = new Set(issue.labels.map((l) => l.id));
  const added = [...new Set(answer.labelIds)].filter((id) => known.has(id) && !have.has(id)).slice(0, config.maxLabels);
  if (added.length > 0) update.labelIds = [...have, ...added];
  return update;
}

export interface TriageDeps {
  api: LinearApi;
  inference?: Inference;
  config: LinearTriageConfig;
  logger: Logger;
}

export type TriageOutcome =
  | { outcome: 'disabled' | 'no_inference' }
  | { outcome: 'applied'; answer: TriageAnswer; update: UpdateIssueInput; commentId: string };

const SYSTEM =
  'You triage new issues of a software team in Linear. Read the issue and answer with ONE JSON object and nothing else:\n' +
  '{"estimate": <story points, one of {{estimates}}, or null>, "labelIds": [<ids of fitting labels from the list, at most {{maxLabels}}>], ' +
  '"priority": <1 urgent, 2 high, 3 medium, 4 low, or null>, "assessment": "<2-4 sentences: what the issue is about, a likely approach, risks or missing information>"}';

/** Runs triage of one issue (see the file comment). Throws when Linear or the model fails, or the answer cannot be parsed. */
export class Triage {
  #d: TriageDeps;

  constructor(deps: TriageDeps) {
    this.#d = deps;
  }

  /** True when triage would run: switched on and a model is available. */
  get active(): boolean {
    return this.#d.config.enabled && this.#d.inference?.available === true;
  }

  /**
   * Triage of one issue. Its effects on Linear (the issue update, the comment) go through `effects`: a job run again
   * after a crash neither updates the issue nor comments a second time.
   */
  async run(issueId: string, effects: EffectScope = UNLEDGERED): Promise<TriageOutcome> {
    const { api, inference, config, logger } = this.#d;
    if (!config.enabled) return { outcome: 'disabled' };
    if (!inference?.available) {
      logger.info({ issue: issueId }, 'linear triage skipped: no inference provider is configured');
      return { outcome: 'no_inference' };
    }
    const issue = await api.getIssue(issueId);
    const labels = await api.teamLabels(issue.team.id);
    const clean = (text: string): string => sanitizePromptInput(text, config.maxInputChars);
    const user = [
      `Issue ${issue.identifier}: ${clean(issue.title)}`,
      `Team: ${issue.team.name}${issue.project ? ` · Project: ${issue.project.name}` : ''}`,
      '',
      clean(issue.description.trim() || '(no description)'),
      '',
      `Labels it has: ${issue.labels.map((l) => l.name).join(', ') || 'none'}`,
      'Labels you can choose from (id: name):',
      ...(labels.length > 0 ? labels.map((l) => `- ${l.id}: ${l.name}`) : ['(none)']),
    ].join('\n');
    const system = SYSTEM.replace('{{estimates}}', JSON.stringify(config.estimates)).replace(
      '{{maxLabels}}',
      String(config.maxLabels),
    );
    const result = await inference.complete({
      system,
      messages: [{ role: 'user', content: user }],
      tools: [],
      sessionId: `triage:${issue.identifier}`,
    });
    const parsed = parseTriageAnswer(result.text);
    if (!parsed.ok) throw new Error(`the model's triage answer could not be used: ${parsed.error}`);
    const update = triageUpdate(issue, parsed.answer, labels, config);
    if (Object.keys(update).length > 0)
      await effects.run('update', 'at-most-once', () => api.updateIssue(issue.id, update));
    const facts = [
      update.estimate !== undefined ? `estimate ${update.estimate}` : null,
      update.priority !== undefined
        ? `priority ${['', 'urgent', 'high', 'medium', 'low'][update.priority] ?? update.priority}`
        : null,
      update.labelIds
        ? `labels ${update.labelIds.map((id) => labels.find((l) => l.id === id)?.name ?? issue.labels.find((l) => l.id === id)?.name ?? id).join(', ')}`
        : null,
    ].filter(Boolean);
    const body = `**Triage**: ${parsed.answer.assessment}${facts.length > 0 ? `\n\n_Set: ${facts.join(' · ')}_` : ''}`;
    const comment = await effects.run('comment', 'keyed', (id) =>
      api.createComment(issue.id, body, id ? { id } : undefined),
    );
    logger.info({ issue: issue.identifier, update }, 'linear triage applied');
    return {
      outcome: 'applied',
      answer: parsed.answer,
      update,
      commentId: comment.kind === 'sent' ? comment.value.id : 'already-posted',
    };
  }
}
