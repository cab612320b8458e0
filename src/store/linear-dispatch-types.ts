// The types of a Linear dispatch as the domain sees it: its statuses and their groups, its record, what an insert and
// a patch give, the coding sessions that work for it, and the node that would claim it.
import type { HarnessName } from '../core/config.ts';
import type { PipelineTier } from '../core/config-linear-pipeline.ts';

/**
 * Lifecycle of a dispatch: `queued` (waiting for a slot under the concurrency cap) → `dispatched` (slot taken, worktree
 * being prepared) → `working` (worker session) → `auditing` (auditor session) → `done`, or back to `working` for a
 * rework, or `stuck` (attempts used up, watchdog killed twice, stale, or setup failed). `stopped` is terminal too: the
 * user sent a stop from Linear. A later prompt reopens a finished dispatch (→ `queued`, stop flag cleared). Which
 * status may move to which is the pipeline's rule (src/linear/pipeline/dispatch-transitions.ts); the store runs the
 * compare-and-swap it is handed.
 */
export const DISPATCH_STATUSES = ['queued', 'dispatched', 'working', 'auditing', 'done', 'stuck', 'stopped'] as const;
export type DispatchStatus = (typeof DISPATCH_STATUSES)[number];

/** Statuses of a dispatch in progress: at most one per issue. */
export const ACTIVE_DISPATCH_STATUSES: readonly DispatchStatus[] = ['queued', 'dispatched', 'working', 'auditing'];
/** Statuses that hold one of the `maxConcurrent` slots. */
export const SLOT_STATUSES: readonly DispatchStatus[] = ['dispatched', 'working', 'auditing'];
/** Finished statuses (pruned after `pruneAfterSec`). */
export const FINISHED_DISPATCH_STATUSES: readonly DispatchStatus[] = ['done', 'stuck', 'stopped'];

/** Free-form context of a dispatch kept with its row (all user text already sanitized). */
export interface DispatchContextData {
  /** The issue's Linear URL. */
  issueUrl?: string;
  /** The text that started the dispatch (agent session prompt, comment…). */
  prompt?: string;
  /** Linear's promptContext of the agent session. */
  promptContext?: string;
  /** Bodies of the guidance rules Linear sent. */
  guidance?: string[];
  /** Follow-up messages of the user (Linear prompts), oldest first. */
  userMessages?: string[];
  /** The gaps of the last failed audit, handed to the next worker. */
  lastGaps?: string[];
  /** Linear prompt activities already taken in (newest last, capped), so a redelivered prompt is not taken twice. */
  promptIds?: string[];
  /** The first thought told to the agent session (kept so a re-run after a crash can send it if it was lost). */
  pickedUp?: string;
}

/** One dispatch of one Linear issue. */
export interface DispatchRecord {
  id: string;
  issueId: string;
  identifier: string;
  title: string;
  agentSessionId: string | null;
  status: DispatchStatus;
  /** Worker attempt number, from 1; grows across rework rounds and reopenings. */
  attempt: number;
  /** First attempt of the current round (a reopen starts a new round with a fresh `maxAttempts` budget). */
  roundStart: number;
  tier: PipelineTier;
  tierReason: string;
  harness: HarnessName;
  model: string | null;
  auditHarness: HarnessName;
  auditModel: string | null;
  profile: string | null;
  repoPath: string;
  branch: string;
  worktreePath: string | null;
  context: DispatchContextData;
  stopRequested: boolean;
  queueSeq: number | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
  lastActivityAt: number;
  completedAt: number | null;
  /** The node that owns it (claimed it and runs its sessions); null while queued, or released by a lost node. */
  node: string | null;
}

/**
 * What an insert gives: the record less what the store sets (status, attempts, stop flag, queue seq, error, worktree,
 * node, and the times but `createdAt`).
 */
export type NewDispatch = Omit<
  DispatchRecord,
  | 'status'
  | 'attempt'
  | 'roundStart'
  | 'stopRequested'
  | 'queueSeq'
  | 'lastError'
  | 'updatedAt'
  | 'lastActivityAt'
  | 'completedAt'
  | 'worktreePath'
  | 'node'
>;

/** Fields a transition or an update may change besides the status. */
export type DispatchPatch = Partial<
  Pick<
    DispatchRecord,
    | 'attempt'
    | 'roundStart'
    | 'lastError'
    | 'stopRequested'
    | 'worktreePath'
    | 'context'
    | 'agentSessionId'
    | 'lastActivityAt'
  >
>;

/** The phase a dispatch's coding session works in: the worker, or the auditor. */
export type DispatchPhase = 'worker' | 'audit';
/** Why the pipeline itself ended a session (null: it ended on its own). */
export type SessionEndCause = 'watchdog' | 'stop' | 'stale';

/** One coding session working for a dispatch. */
export interface DispatchSession {
  seq: number;
  sessionId: string;
  dispatchId: string;
  phase: DispatchPhase;
  attempt: number;
  /** 1, or 2 for the one retry after a watchdog kill. */
  try: number;
  endCause: SessionEndCause | null;
  startedAt: number;
  endedAt: number | null;
}

/** The node that would claim a dispatch, and what it can run (see runnableBy in linear-dispatch-claims.ts). */
export interface Claimant {
  node: string;
  /** Its workspace roots (absolute, resolved): a dispatch's repository must be one of them or inside one. */
  workspaces: readonly string[];
  /** The harnesses it has: the dispatch's worker and audit harness must be among them. */
  harnesses: readonly string[];
  /**
   * This run's incarnation in `cluster_nodes`, read at each claim (it changes when the node rejoins; null before it
   * joined). Given, a claim commits only while the node's row is `up` under it (store/node-fence.ts): a node declared
   * down while alive claims nothing. Absent, claims are not fenced.
   */
  incarnation?: () => string | null;
  /** With `incarnation`, on PostgreSQL: the claim transaction's idle bound (ms; see store/node-fence.ts). */
  idleTimeoutMs?: number;
}
