// Tier assessment (junior / medior / senior) and the choice of harness and model that follows from it.
//
// The tier rule, in order (deterministic, no model call):
//   1. A label `tier:junior`, `tier:medior` or `tier:senior` (case-insensitive; `tier/x` and `tier x` too) wins. With
//      several such labels the highest tier wins.
//   2. Else, with an estimate: estimate ≤ juniorMaxEstimate (1) → junior, ≤ mediorMaxEstimate (3) → medior, else senior;
//      a description longer than mediorMaxDescriptionChars (2,500) raises that by one level (a long spec is more work
//      than its estimate says).
//   3. Else, by description size (trimmed): ≤ juniorMaxDescriptionChars (600) → junior, ≤ mediorMaxDescriptionChars →
//      medior, else senior.
//
// Harness: a label `harness:claude|codex|gemini` > the agent profile's harness > the tier's harness > the pipeline's
// `defaultHarness` > the top-level `defaultHarness`. Model: the profile's model, else the tier's model — each only when
// it belongs to the chosen harness (its entry names no harness or the same one); otherwise the harness's own default.
// The auditor runs on `audit.harness` (default: the worker's) with `audit.model` (default: the worker's model when the
// harness is the same).
import type { HarnessName } from '../../core/config.ts';
import type { AgentProfile, LinearPipelineConfig, PipelineTier } from '../../core/config-linear-pipeline.ts';
import type { LinearIssue } from '../api/types.ts';

export const TIERS: readonly PipelineTier[] = ['junior', 'medior', 'senior'];

export interface TierDecision {
  tier: PipelineTier;
  /** Why, in a few words (shown in Linear and the manifest). */
  reason: string;
}

/** A harness and the model to ask it for (null: the harness's default). */
export interface Runner {
  harness: HarnessName;
  model: string | null;
}

export interface RunnerChoice {
  worker: Runner;
  audit: Runner;
  /** Where the worker's harness came from: label, profile, tier or default. */
  harnessSource: 'label' | 'profile' | 'tier' | 'default';
}

const TIER_LABEL = /^tier\s*[:/ ]\s*(junior|medior|senior)$/i;
const HARNESS_LABEL = /^harness\s*[:/ ]\s*(claude|codex|gemini)$/i;

function raise(tier: PipelineTier): PipelineTier {
  return TIERS[Math.min(TIERS.indexOf(tier) + 1, TIERS.length - 1)] as PipelineTier;
}

/** Decides the tier of an issue from its labels, estimate and description size (rule above). Pure. */
export function assessTier(
  issue: Pick<LinearIssue, 'labels' | 'estimate' | 'description'>,
  rules: LinearPipelineConfig['tierRules'],
): TierDecision {
  const labelled = issue.labels
    .map((l) => TIER_LABEL.exec(l.name.trim())?.[1]?.toLowerCase() as PipelineTier | undefined)
    .filter((t): t is PipelineTier => t !== undefined);
  if (labelled.length > 0) {
    const tier = labelled.reduce((a, b) => (TIERS.indexOf(b) > TIERS.indexOf(a) ? b : a));
    return { tier, reason: `label tier:${tier}` };
  }
  const size = issue.description.trim().length;
  if (issue.estimate !== null) {
    const e = issue.estimate;
    let tier: PipelineTier =
      e <= rules.juniorMaxEstimate ? 'junior' : e <= rules.mediorMaxEstimate ? 'medior' : 'senior';
    let reason = `estimate ${e}`;
    if (size > rules.mediorMaxDescriptionChars && tier !== 'senior') {
      tier = raise(tier);
      reason += `, raised for a ${size}-character description`;
    }
    return { tier, reason };
  }
  const tier: PipelineTier =
    size <= rules.juniorMaxDescriptionChars ? 'junior' : size <= rules.mediorMaxDescriptionChars ? 'medior' : 'senior';
  return { tier, reason: `no estimate, ${size}-character description` };
}

/** The harness named by a `harness:*` label, if any (the last such label wins). */
export function harnessFromLabels(labels: readonly { name: string }[]): HarnessName | undefined {
  let found: HarnessName | undefined;
  for (const label of labels) {
    const match = HARNESS_LABEL.exec(label.name.trim());
    if (match?.[1]) found = match[1].toLowerCase() as HarnessName;
  }
  return found;
}

function modelFor(
  entry: { harness?: HarnessName | undefined; model?: string | undefined } | undefined,
  harness: HarnessName,
): string | null {
  if (!entry?.model) return null;
  return !entry.harness || entry.harness === harness ? entry.model : null;
}

/** Chooses the worker's and the auditor's harness and model for a tier (rule above). Pure. */
export function chooseRunners(options: {
  tier: PipelineTier;
  labels: readonly { name: string }[];
  profile: AgentProfile | undefined;
  pipeline: Pick<LinearPipelineConfig, 'tiers' | 'defaultHarness' | 'audit'>;
  defaultHarness: HarnessName;
}): RunnerChoice {
  const { tier, labels, profile, pipeline } = options;
  const tierEntry = pipeline.tiers[tier];
  const fromLabel = harnessFromLabels(labels);
  let harness: HarnessName;
  let harnessSource: RunnerChoice['harnessSource'];
  if (fromLabel) [harness, harnessSource] = [fromLabel, 'label'];
  else if (profile?.harness) [harness, harnessSource] = [profile.harness, 'profile'];
  else if (tierEntry.harness) [harness, harnessSource] = [tierEntry.harness, 'tier'];
  else [harness, harnessSource] = [pipeline.defaultHarness ?? options.defaultHarness, 'default'];
  const model = modelFor(profile, harness) ?? modelFor(tierEntry, harness);
  const auditHarness = pipeline.audit.harness ?? harness;
  const auditModel = modelFor(pipeline.audit, auditHarness) ?? (auditHarness === harness ? model : null);
  return { worker: { harness, model }, audit: { harness: auditHarness, model: auditModel }, harnessSource };
}
