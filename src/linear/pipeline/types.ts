import type { Kysely } from 'kysely';
import type { SessionManager } from '../../coding/session-manager.ts';
// Public types of the Linear dispatch pipeline: what the webhook router hands in and what it gets back.
import type { Clock } from '../../core/clock.ts';
import type { Config } from '../../core/config.ts';
import { AppError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { DispatchRecord } from '../../store/linear-dispatch-types.ts';
import type { SessionLogs } from '../../store/session-logs.ts';
import type { Database } from '../../store/tables/index.ts';
import type { LinearApi, LinearIssue } from '../api/types.ts';
import type { LinearApprovalDesk } from '../approvals-bridge.ts';
import type { DispatchPullRequests } from './deliver.ts';
import type { DispatchPlacement } from './placement.ts';
import type { OperationForwarder } from './remote-sessions.ts';

/** What the pipeline is built from (main.ts hands these in). */
export interface PipelineDeps {
  config: Config;
  clock: Clock;
  logger: Logger;
  /** The daemon's SQLite database (migrations 420+ applied). */
  db: Kysely<Database>;
  /** The coding sessions; `restore()` must have run before `Pipeline.start()`. */
  sessions: SessionManager;
  /** The SessionLogs instance the SessionManager writes through (the watchdogs subscribe to it). */
  logs: SessionLogs;
  linear: LinearApi;
  notifier: PipelineNotifier;
  /** Checked before a new dispatch is created (the planner's planning-mode guard); none: everything may be dispatched. */
  guard?: DispatchGuard;
  /** The ApprovalDesk: workers' requests are posted to their agent session and replies there decide them. */
  approvals?: LinearApprovalDesk;
  /**
   * GitHub's pull-request service: with it a passed audit ends in a PR (`linear.pipeline.onPass`, default
   * `pull-request` when it is given); without it `onPass: pull-request` falls back to `done` with a warning.
   */
  pullRequests?: DispatchPullRequests;
  /**
   * In a cluster (PostgreSQL): this node's placement. With it the pipeline runs only the dispatches this node claimed
   * (repository in its workspaces, its harnesses, a free session slot), and `kick()`/`releaseNode()` are wired to the
   * cluster's notifications and takeover. Without it (a node alone) it runs every dispatch.
   */
  placement?: DispatchPlacement;
  /**
   * In a cluster: runs an operation on another node. A follow-up prompt or an approval reply for a worker running on
   * another node is forwarded there (`respond`, `approval_decide`); without it such a prompt is only noted.
   */
  forwarder?: OperationForwarder;
}

/** Tells the user on their chat channel (the lead wires it to the Outbox / fallbackChannel). */
export interface PipelineNotifier {
  /** Delivers `text` to the user; may reject (the pipeline logs it and carries on). */
  notify(text: string): Promise<void> | void;
  /** Optional: told when a dispatch is done, with a short summary (a notifier without it hears only of stuck ones). */
  done?(text: string): Promise<void> | void;
}

/** What came with a dispatch request. */
export interface DispatchContext {
  /**
   * The Linear agent session to report to: the one Linear created (AgentSessionEvent `created`), or none for an
   * assignment (Issue.update), in which case the pipeline creates one with `createAgentSessionOnIssue`.
   */
  agentSessionId?: string;
  /** An agent profile of `linear.pipeline.profiles` (harness, model, watchdog limits). */
  profile?: string;
  /** The user's text that started it (agent session prompt or comment). */
  prompt?: string;
  /** Linear's `promptContext`. */
  promptContext?: string;
  /** Bodies of Linear's guidance rules. */
  guidance?: string[];
  /**
   * The key of the event asking for this dispatch (`created:<agent session>`, `prompt:<activity>`): what the pipeline
   * tells Linear about that event (a refusal, a duplicate) is sent once under it, however often the event comes.
   */
  effectKey?: string;
  /** The Linear prompt activity that starts it: a later redelivery of that prompt is recognised and not noted again. */
  promptId?: string;
}

/**
 * Decides whether an issue may be dispatched now (the planner blocks the issues of a project in planning mode). Returns
 * the reason it may not, told to the user as is, or null.
 */
export interface DispatchGuard {
  isBlocked(issue: LinearIssue): string | null | Promise<string | null>;
}

/** `dispatch` refused by the guard; the message is the guard's reason (the agent session, or else the issue, is told it). */
export class DispatchBlockedError extends AppError {
  readonly issueId: string;

  constructor(reason: string, issueId: string) {
    super('conflict', reason);
    this.name = 'DispatchBlockedError';
    this.issueId = issueId;
  }
}

/** The answer to `dispatch`. */
export type DispatchResult =
  | { outcome: 'started'; dispatch: DispatchRecord }
  | { outcome: 'queued'; dispatch: DispatchRecord; position: number }
  /** The issue already has a dispatch in progress; nothing new was started. */
  | { outcome: 'duplicate'; dispatch: DispatchRecord };

/** The answer to `onPrompt`. */
export type PromptResult =
  /** A finished (done, stuck or stopped) dispatch was reopened: queued for a new round, stop flag cleared. */
  | { outcome: 'reopened'; dispatch: DispatchRecord }
  /** The running worker got the message (it interrupts its current turn and continues with it). */
  | { outcome: 'forwarded'; dispatch: DispatchRecord }
  /** Kept for the next worker attempt and the audit (queued, setting up or auditing). */
  | { outcome: 'noted'; dispatch: DispatchRecord }
  /** This prompt (by its activity id) was already taken in: nothing was done again. */
  | { outcome: 'duplicate'; dispatch: DispatchRecord }
  | { outcome: 'unknown' };

/** The answer to `onStop`. */
export type StopResult =
  | { outcome: 'stopped'; dispatch: DispatchRecord }
  /** Nothing was running: the dispatch had already finished. */
  | { outcome: 'idle'; dispatch: DispatchRecord }
  | { outcome: 'unknown' };

/** What one monitor pass did. */
export interface MonitorReport {
  stale: string[];
  reconciled: string[];
  pruned: number;
}
