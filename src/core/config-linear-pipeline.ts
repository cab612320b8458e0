// Config of the Linear dispatch pipeline (worker → audit → verdict), its watchdog and its concurrency cap.
// Harness and permission names are spelled out here (not imported from config.ts, which imports this file).
import { z } from 'zod';

const harnessName = z.enum(['claude', 'codex', 'gemini']);
const permissionMode = z.enum(['default', 'plan', 'acceptEdits', 'bypassPermissions', 'dontAsk', 'auto']);
const seconds = z.number().positive();

/** Watchdog limits in seconds; every key optional so a profile can override one of them. */
const watchdogOverrideSchema = z.strictObject({
  /** No session activity (output, tool call, tool result…) for this long kills the phase. */
  inactivitySec: seconds.optional(),
  /** A phase running longer than this in total is killed. */
  maxTotalSec: seconds.optional(),
  /** One tool call running longer than this is killed (while a tool runs, this replaces the inactivity limit). */
  toolTimeoutSec: seconds.optional(),
});

/** What a tier (or the auditor) runs on; an unset harness keeps the one chosen otherwise. */
const runnerSchema = z.strictObject({
  harness: harnessName.optional(),
  /** Applied only when the run's harness is this entry's harness (or the entry names none). */
  model: z.string().min(1).optional(),
});

/** A named agent profile a dispatch can ask for (dispatch context `profile`). */
const profileSchema = z.strictObject({
  harness: harnessName.optional(),
  model: z.string().min(1).optional(),
  watchdog: watchdogOverrideSchema.optional(),
});

export const linearPipelineSchema = z.strictObject({
  /** Worker attempts (worker + audit rounds) before an issue is marked stuck. */
  maxAttempts: z.number().int().positive().default(3),
  /** Dispatches worked on at once (worker or audit running); the others wait in a durable FIFO queue. */
  maxConcurrent: z.number().int().positive().default(2),
  /** The git repository issues are worked in; default: the top-level `defaultWorkdir`. */
  repo: z.string().min(1).optional(),
  /** Linear team key → repository, for teams that live in another repository than `repo`. */
  teamRepos: z.record(z.string(), z.string().min(1)).default({}),
  /** Where worktrees are created; default `<repo>/.switchboard/worktrees`. */
  worktreeDir: z.string().min(1).optional(),
  /** The remote whose default branch new branches start from (HEAD when it has none). */
  remote: z
    .string()
    .regex(/^[A-Za-z0-9._-]+$/, 'letters, digits, ".", "_" and "-" only')
    .default('origin'),
  /** Fetch the remote (asynchronously, at most once per new worktree) before branching from it. */
  fetchBeforeBranch: z.boolean().default(false),
  /** Harness when no label, profile or tier picks one; default: the top-level `defaultHarness`. */
  defaultHarness: harnessName.optional(),
  /** Permission mode of worker sessions (auditors always run read-only: `plan`). */
  workerPermissionMode: permissionMode.default('bypassPermissions'),
  /** Model and harness per tier; the tier is decided from labels, estimate and description size (see tier.ts). */
  tiers: z
    .strictObject({
      junior: runnerSchema.default({ harness: 'claude', model: 'haiku' }),
      medior: runnerSchema.default({ harness: 'claude', model: 'sonnet' }),
      senior: runnerSchema.default({ harness: 'claude', model: 'opus' }),
    })
    .prefault({}),
  /** Thresholds of the tier rule. */
  tierRules: z
    .strictObject({
      /** Estimates up to this are junior work. */
      juniorMaxEstimate: z.number().min(0).default(1),
      /** Estimates up to this (and above juniorMaxEstimate) are medior work; above is senior. */
      mediorMaxEstimate: z.number().min(0).default(3),
      /** Without an estimate: descriptions up to this many characters are junior work. */
      juniorMaxDescriptionChars: z.number().int().min(0).default(600),
      /** Without an estimate: descriptions up to this many characters are medior work; longer is senior. */
      mediorMaxDescriptionChars: z.number().int().min(0).default(2_500),
    })
    .prefault({}),
  /** The auditor: harness and model (default: the worker's), and tools it may use without asking (Claude only). */
  audit: z
    .strictObject({
      harness: harnessName.optional(),
      model: z.string().min(1).optional(),
      /**
       * Claude tools auto-allowed for the auditor, e.g. ["Bash(npm test:*)"]. The auditor runs in plan mode (read-only)
       * and every other permission request it makes is denied.
       */
      allowedTools: z.array(z.string().min(1)).optional(),
    })
    .prefault({}),
  /** Watchdog defaults (seconds); a profile's `watchdog` wins over these. */
  watchdog: z
    .strictObject({
      inactivitySec: seconds.default(120),
      maxTotalSec: seconds.default(7_200),
      toolTimeoutSec: seconds.default(600),
    })
    .prefault({}),
  /** Named agent profiles (harness, model, watchdog limits). */
  profiles: z.record(z.string().min(1), profileSchema).default({}),
  /** The background monitor runs this often. */
  monitorIntervalSec: seconds.default(300),
  /** An active dispatch without any activity for this long is marked stuck. */
  staleAfterSec: seconds.default(7_200),
  /** Finished dispatches (done, stuck, stopped) are deleted from the store after this long. */
  pruneAfterSec: seconds.default(604_800),
  /** Thoughts and actions sent to a Linear agent session are coalesced over this window. */
  activityThrottleMs: z.number().int().min(0).default(3_000),
  /** worker-N.md keeps at most this many bytes of the worker's output (the tail). */
  workerOutputMaxBytes: z.number().int().positive().default(8_192),
  /** User text put into prompts (issue description, comments, messages) is cut to this many characters. */
  promptInputMaxChars: z.number().int().positive().default(4_000),
  /**
   * What a passed audit leads to. `pull-request`: the worker's branch is pushed, a PR is opened and attached to the
   * issue, and the issue moves to the team's review state; `done`: the issue moves to a completed state. Default:
   * `pull-request` when `github.enabled`, else `done`.
   */
  onPass: z.enum(['pull-request', 'done']).optional(),
  /** Coding sessions of the pipeline report to this origin channel. */
  originChannel: z.string().min(1).default('linear'),
});

export type LinearPipelineConfig = z.infer<typeof linearPipelineSchema>;
export type PipelineTier = 'junior' | 'medior' | 'senior';
export type AgentProfile = z.infer<typeof profileSchema>;
