// Prompts of the pipeline: built-in defaults, overridable per repository by `<repo>/.switchboard/prompts.yaml`
// (shallow merge per section), `{{var}}` templating, and sanitizing of user text put into them.
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import type { PipelineTier } from '../../core/config-linear-pipeline.ts';
import { formatZodError, invalidInput } from '../../core/errors.ts';
import { readTextIfExists } from '../../store/artifact-files.ts';
import { ARTIFACT_DIR } from './artifacts.ts';

export interface PromptSet {
  worker: { system: string; task: string };
  audit: { system: string; task: string };
  rework: { addendum: string };
  resume: { worker: string };
  tiers: Record<PipelineTier, string>;
}

/**
 * Appended to every audit prompt (also to an overridden `audit.task` that does not already end with it), so the
 * verdict can always be parsed. The shape line is deliberately not valid JSON (`<true or false>`), so an echo of the
 * prompt is never taken for a verdict.
 */
export const VERDICT_INSTRUCTION =
  'End your reply with your verdict: one JSON object on its own line, in exactly this shape:\n' +
  '{"pass": <true or false>, "criteria": ["<each requirement of the issue and whether it is met>"], ' +
  '"gaps": ["<each thing that is missing or wrong; empty when pass is true>"], ' +
  '"testResults": "<what you ran and the outcome, e.g. 14 passed, 0 failed>"}';

export const DEFAULT_PROMPTS: PromptSet = {
  worker: {
    system:
      'You are a software engineer working on the Linear issue {{identifier}} in a dedicated git worktree at {{worktreePath}} ' +
      '(branch {{branch}}). Work only inside that directory. Make the change the issue asks for, add or update tests, run them, ' +
      'and commit your work on this branch with a clear message. Do not push, open pull requests or change the issue in Linear: ' +
      'switchboard reports your work. When you are done, end with a short summary of what you changed and how you tested it.\n\n' +
      '{{tierHint}}',
    task:
      '# {{identifier}}: {{title}}\n\n{{description}}\n\n' +
      'Issue: {{url}}\nTeam: {{teamContext}}\nProject: {{projectContext}}\n\n' +
      '## Guidance\n{{guidance}}\n\n## Recent comments\n{{comments}}\n\n## Messages from the user\n{{userMessages}}\n\n' +
      'This is attempt {{attempt}} of {{maxAttempts}}. An independent auditor will check your work against the issue when you finish.',
  },
  audit: {
    system:
      'You are an independent auditor of the work done for the Linear issue {{identifier}} in {{worktreePath}} (branch {{branch}}). ' +
      'You may only read files and run tests or other read-only commands. Never edit, create or delete files, never commit or push, ' +
      'and never change the issue in Linear (no status changes, comments or sub-issues): switchboard records your verdict and ' +
      'updates the issue itself.',
    task:
      'Audit the work done for {{identifier}}: {{title}}\n\n## The issue\n{{description}}\n\n## Guidance\n{{guidance}}\n\n' +
      "## Messages from the user\n{{userMessages}}\n\n## The worker's report (attempt {{attempt}})\n{{workerReport}}\n\n" +
      'Check the changes on branch {{branch}} (git log, git diff against where it started, the code and the tests) against every ' +
      'requirement of the issue, and run the tests.',
  },
  rework: {
    addendum:
      '## Rework (attempt {{attempt}} of {{maxAttempts}})\nAn independent audit of the previous attempt found these gaps:\n{{gaps}}\n\n' +
      'Fix every gap, run the tests again, commit, and end with a summary of what you changed.',
  },
  resume: {
    worker:
      'switchboard restarted while you were working on {{identifier}}. Continue the task where you left off: check the state of ' +
      'the worktree first. When you are done, end with a short summary of what you changed and how you tested it.',
  },
  tiers: {
    junior: 'This issue was assessed as junior-level work: a small, well-contained change. Keep the change minimal.',
    medior:
      'This issue was assessed as medior-level work: a moderate change that may touch several files. Plan briefly before you edit.',
    senior:
      'This issue was assessed as senior-level work: a large or subtle change. Study the relevant code first, write down a short ' +
      'plan, and work in small verified steps.',
  },
};

const text = z.string();
/** The file format; unknown top-level sections (e.g. a planner's) are ignored, unknown keys inside ours are errors. */
export const promptsFileSchema = z.looseObject({
  worker: z.strictObject({ system: text.optional(), task: text.optional() }).optional(),
  audit: z.strictObject({ system: text.optional(), task: text.optional() }).optional(),
  rework: z.strictObject({ addendum: text.optional() }).optional(),
  resume: z.strictObject({ worker: text.optional() }).optional(),
  tiers: z.strictObject({ junior: text.optional(), medior: text.optional(), senior: text.optional() }).optional(),
});
export type PromptsFile = z.infer<typeof promptsFileSchema>;

/** Parses and validates a prompts.yaml; throws invalid_input naming the file and the field. Empty text is no override. */
export function parsePromptsFile(yamlText: string, source: string): PromptsFile {
  let value: unknown;
  try {
    value = parseYaml(yamlText);
  } catch (error) {
    throw invalidInput(`${source}: not valid YAML: ${error instanceof Error ? error.message : String(error)}`, source);
  }
  if (value === null || value === undefined) return {};
  const result = promptsFileSchema.safeParse(value);
  if (!result.success) throw invalidInput(`${source}: ${formatZodError(result.error)}`, source);
  return result.data;
}

/** The defaults with each section of `override` merged over them (a section's keys replace the default's). */
export function mergePrompts(base: PromptSet, override: PromptsFile): PromptSet {
  const pick = <T extends object>(a: T, b: Partial<T> | undefined): T => ({
    ...a,
    ...Object.fromEntries(Object.entries(b ?? {}).filter(([, v]) => v !== undefined)),
  });
  return {
    worker: pick(base.worker, override.worker),
    audit: pick(base.audit, override.audit),
    rework: pick(base.rework, override.rework),
    resume: pick(base.resume, override.resume),
    tiers: pick(base.tiers, override.tiers),
  };
}

/**
 * Replaces every `{{name}}` in `template` with `vars[name]` (unknown names become empty). One pass, so a value that
 * contains `{{…}}` is never expanded again.
 */
export function renderTemplate(template: string, vars: Readonly<Record<string, string>>): string {
  return template.replace(/\{\{\s*([A-Za-z][A-Za-z0-9_]*)\s*\}\}/g, (_, name: string) => vars[name] ?? '');
}

/**
 * Cleans user text before it goes into a prompt: cut to `maxChars` (with a marker saying so) and `{{` turned into
 * `{ {` so it can never look like a template variable.
 */
export function sanitizePromptInput(input: string, maxChars: number): string {
  let out = input.replace(/\r\n/g, '\n');
  if (out.length > maxChars) out = `${out.slice(0, maxChars)}\n[… cut: ${out.length - maxChars} more characters]`;
  return out.replace(/\{\{/g, '{ {');
}

/** The audit task with the verdict instruction at its end (added unless the task already ends with it). */
export function withVerdictInstruction(task: string): string {
  const trimmed = task.trimEnd();
  return trimmed.endsWith(VERDICT_INSTRUCTION) ? trimmed : `${trimmed}\n\n${VERDICT_INSTRUCTION}`;
}

const PROMPTS_FILE = join(ARTIFACT_DIR, 'prompts.yaml');

/** The prompts for a repository: defaults merged with `<repo>/.switchboard/prompts.yaml`; throws when that file is invalid. */
export async function loadPrompts(repo: string): Promise<PromptSet> {
  const path = join(repo, PROMPTS_FILE);
  const text = await readTextIfExists(path);
  return text === null ? DEFAULT_PROMPTS : mergePrompts(DEFAULT_PROMPTS, parsePromptsFile(text, path));
}
