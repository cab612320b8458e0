// Config of the Linear integration around the pipeline: agent profiles (@mention routing, spawn_agent / ask_agent,
// code_run), the event router, auto-triage, the project planner and the coding tool. config-linear.ts nests them.
import { z } from 'zod';

const harnessName = z.enum(['claude', 'codex', 'gemini']);
const permissionMode = z.enum(['default', 'plan', 'acceptEdits', 'bypassPermissions', 'dontAsk', 'auto']);
const seconds = z.number().positive();
const alias = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'a handle: letters, digits, ".", "_" or "-", without the @')
  .transform((s) => s.toLowerCase());

/**
 * A named agent: what answers an @mention of one of its aliases in a Linear comment, what `spawn_agent` / `ask_agent`
 * start with `agent: <name>`, and the backend `code_run` uses when such an agent calls it.
 */
export const agentProfileSchema = z.strictObject({
  /** @handles that address this agent in a comment (default: the profile's name). */
  mentionAliases: z.array(alias).optional(),
  /** Instructions put in front of every request to this agent. */
  instructions: z.string().default(''),
  /** How a mention is answered: `agent` asks the engine (a subagent turn), `coding` runs one coding-agent turn in the issue's repository. */
  answerWith: z.enum(['agent', 'coding']).default('agent'),
  /** Coding backend of `coding` answers and of this agent's `code_run` calls. */
  harness: harnessName.optional(),
  model: z.string().min(1).optional(),
  /** Permission mode of `coding` answers (read-only by default: a mention answers, it does not change code). */
  permissionMode: permissionMode.default('plan'),
  /** Longest wait for an answer (engine reply or coding turn). */
  timeoutSec: seconds.default(600),
  /** Coding turns: no activity for this long kills the turn. */
  inactivitySec: seconds.default(120),
});

/** How comments that address an agent are answered. */
export const linearMentionsSchema = z.strictObject({
  /** Handles of the app itself (its Linear user name is always one). */
  appAliases: z.array(alias).default(['switchboard']),
  /** Profile that answers comments addressed to the app itself (AppUserNotification issueCommentMention); none: a plain engine agent. */
  defaultProfile: z.string().min(1).optional(),
  /**
   * A mention reported by an AppUserNotification is answered only after this delay, and only if no other path (the
   * Comment webhook, an agent session on the same comment) took the comment meanwhile.
   */
  notificationDelaySec: z.number().min(0).default(10),
  /** Answers longer than this are cut (Linear comments stay readable). */
  maxReplyChars: z.number().int().positive().default(20_000),
});

/** The durable work queue behind the router (mention answers, triage, planner turns). */
export const linearRouterSchema = z.strictObject({
  /** Jobs run at once (never two of the same planning session or comment). */
  concurrency: z.number().int().positive().default(2),
  /** Attempts per job before it gives up and says so in Linear. */
  maxAttempts: z.number().int().positive().default(3),
  /** First retry delay; doubles per attempt. */
  retryInitialSec: seconds.default(30),
  /**
   * An assignment seen by both the Issue webhook and the AppUserNotification within this window is one assignment
   * (dispatched once).
   */
  assignmentPairWindowSec: seconds.default(600),
  /** Finished jobs and claims are kept this long (7 days). */
  retentionSec: seconds.default(604_800),
  /** How often finished jobs and old claims are pruned (1 h). */
  pruneIntervalSec: seconds.default(3_600),
  /** At shutdown, jobs still running after this long are left behind (they run again at the next start). */
  stopGraceSec: seconds.default(10),
});

/** Auto-triage of new issues. */
export const linearTriageSchema = z.strictObject({
  /** Triage new issues (needs an inference provider; skipped with a log line without one). */
  enabled: z.boolean().default(true),
  /** Estimates the model may pick (Linear's Fibonacci scale by default). */
  estimates: z.array(z.number().min(0)).min(1).default([0, 1, 2, 3, 5, 8, 13]),
  /** At most this many labels are added. */
  maxLabels: z.number().int().min(0).default(3),
  /** Issue text given to the model is cut to this many characters. */
  maxInputChars: z.number().int().positive().default(4_000),
});

/** The interactive project planner. */
export const linearPlannerSchema = z.strictObject({
  enabled: z.boolean().default(true),
  /** Model calls per interview turn (each may run planner tools). */
  maxToolIterations: z.number().int().positive().default(20),
  /** The audit's shortest acceptable description. */
  minDescriptionChars: z.number().int().min(0).default(50),
  /** Interview messages kept in the model's context (the project snapshot carries the rest). */
  maxHistoryMessages: z.number().int().positive().default(30),
  /** Issues a planning session may create in total. */
  maxIssues: z.number().int().positive().default(200),
});

/** The `code_run` tool: one coding-agent turn with a watchdog. */
export const linearCodeRunSchema = z.strictObject({
  /** Backend when neither the call nor the calling agent's profile names one; default the top-level `defaultHarness`. */
  harness: harnessName.optional(),
  /** Wall-clock limit of one run. */
  timeoutSec: seconds.default(7_200),
  /** No activity for this long kills the run. */
  inactivitySec: seconds.default(120),
  /** One tool call may run this long. */
  toolTimeoutSec: seconds.default(600),
  permissionMode: permissionMode.default('bypassPermissions'),
  /** Working directory when the call names none; default the top-level `defaultWorkdir`. */
  workdir: z.string().min(1).optional(),
  /** The run's output given back is cut to its last this-many characters. */
  maxOutputChars: z.number().int().positive().default(20_000),
});

export type AgentProfileConfig = z.infer<typeof agentProfileSchema>;
export type LinearMentionsConfig = z.infer<typeof linearMentionsSchema>;
export type LinearRouterConfig = z.infer<typeof linearRouterSchema>;
export type LinearTriageConfig = z.infer<typeof linearTriageSchema>;
export type LinearPlannerConfig = z.infer<typeof linearPlannerSchema>;
export type LinearCodeRunConfig = z.infer<typeof linearCodeRunSchema>;
