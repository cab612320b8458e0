// What a coding session is, as the store keeps it: its statuses, its launch spec, where a queued launch may run, the
// stored row and the patch that changes it. Shared by the coding-session stores and every caller that reads sessions.
import type { HarnessName, PermissionMode } from '../core/config.ts';

/**
 * Lifecycle states of a coding session (the seed's five, plus `interrupted` for runs cut off by a daemon crash or a
 * lost node, and `queued` for a launch waiting in the cluster's queue for a node with a free slot).
 */
export const SESSION_STATUSES = [
  'starting',
  'running',
  'completed',
  'failed',
  'killed',
  'interrupted',
  'queued',
] as const;
/** One of SESSION_STATUSES. */
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/** Statuses that hold a live agent process and count against maxSessions. */
export const ACTIVE_STATUSES: readonly SessionStatus[] = ['starting', 'running'];

/** True for a status that holds a live agent process. */
export function isActiveStatus(status: SessionStatus): boolean {
  return ACTIVE_STATUSES.includes(status);
}

/** One channel's view of a session: streaming live (`on`) or detached, and the last log seq it has seen. */
export interface ChannelView {
  on: boolean;
  seenSeq: number;
}

/** Where a queued launch may run: on one node (by name) and/or on a node with every one of these labels. */
export interface Placement {
  on?: string;
  labels?: readonly string[];
}

/** Everything needed to (re)start an agent run for a session. */
export interface LaunchSpec {
  harness: HarnessName;
  prompt: string;
  workdir: string;
  model?: string;
  maxBudgetUsd: number;
  permissionMode: PermissionMode;
  systemPrompt?: string;
  allowedTools?: string[];
  multiTurn: boolean;
  /** Backend session id to resume (Claude session id, Codex thread id, Gemini session id). */
  resumeBackendId?: string;
  forkSession: boolean;
  /**
   * The component that launched the session and handles its events itself (`linear-pipeline`, `code_run`); absent for
   * sessions people or the orchestrator launched. An owned session's events never wake the orchestrator.
   */
  owner?: string;
  /**
   * Limits in ms the node that runs the session enforces itself (a `code_run` turn: coding/code-run-watchdog.ts), so
   * they hold wherever it was placed and whatever becomes of the node that asked.
   */
  watchdog?: { inactivityMs: number; maxTotalMs: number; toolTimeoutMs: number };
  /**
   * The commit the working directory was at when the session was launched (`git rev-parse HEAD`); absent when it was
   * not a git repository, had no commits, or the session was launched before bases were recorded. `diff` diffs
   * against it; an in-place resume keeps it.
   */
  baseCommit?: string;
}

/** The persisted row of one coding session. */
export interface StoredSession {
  id: string;
  name: string;
  harness: HarnessName;
  status: SessionStatus;
  prompt: string;
  workdir: string;
  model: string | null;
  backendSessionId: string | null;
  originChannel: string;
  originSessionId: string | null;
  spec: LaunchSpec;
  costUsd: number;
  startedAt: number;
  completedAt: number | null;
  updatedAt: number;
  error: string | null;
  endReason: string | null;
  budgetExhausted: boolean;
  /** Chat channels that have looked at this session: whether they watch it live, and the last log seq they saw. */
  foreground: Record<string, ChannelView>;
  autoResponds: number;
  resumedFrom: string | null;
  forked: boolean;
  pid: number | null;
  /** The node of the cluster that runs (or ran) it; null while a launch waits in the queue (and for older rows). */
  node: string | null;
}

/** The fields of a stored session a write may change (all but its id, name, harness and start time). */
export type SessionPatch = Partial<Omit<StoredSession, 'id' | 'name' | 'harness' | 'startedAt'>>;
