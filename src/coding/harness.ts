import type { HarnessName, PermissionMode } from '../core/config.ts';

/** Why a turn did not succeed. `interrupted` is not a session failure: the user stopped the turn to redirect it. */
export type FailureReason = 'budget_exhausted' | 'max_turns' | 'api_error' | 'execution_error' | 'interrupted';

/** How a turn ended, decided from the backend's explicit error fields, never from a subtype alone. */
export type TurnOutcome =
  { ok: true; result?: string } | { ok: false; reason: FailureReason; message: string; apiErrorStatus?: number };

/** Token counts for one turn (not cumulative). */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens?: number;
}

/** Normalized events every harness produces; the Session consumes nothing else. */
export type HarnessEvent =
  /** The backend's own session id is known (Claude session_id, Codex thread_id, Gemini session_id). */
  | { type: 'started'; backendSessionId: string; model?: string }
  /** A block of assistant text. */
  | { type: 'text'; text: string }
  /** A tool call began. */
  | { type: 'tool'; id: string; name: string; input: unknown }
  /** A tool call finished. */
  | { type: 'toolResult'; id: string; isError: boolean; output?: string }
  /** The agent explicitly asked the user something (a question tool, Codex request_user_input). */
  | { type: 'question'; text: string }
  /** The agent needs approval to use a tool; answer with `Run.answerPermission`. */
  | { type: 'permission'; requestId: string; tool: string; input: unknown }
  /** A turn ended. `costUsd` is what this turn cost (0 when the backend reports no cost). */
  | { type: 'turnEnd'; outcome: TurnOutcome; costUsd: number; usage?: Usage }
  /** The backend is alive but said nothing worth showing (stream deltas, status pings). */
  | { type: 'activity' }
  /** Something non-fatal went wrong: a malformed line, a backend warning. `malformed` lines are counted. */
  | { type: 'warning'; message: string; malformed?: boolean }
  /** The run is over: the process exited (or could not start). The iterator ends after this event. */
  | { type: 'exited'; code: number | null; error?: string };

export type HarnessEventType = HarnessEvent['type'];

/** What a harness needs to start a run. */
export interface RunSpec {
  /** switchboard's own session id (tagged on child processes so orphans can be found). */
  sessionId: string;
  prompt: string;
  workdir: string;
  model?: string;
  maxBudgetUsd?: number;
  permissionMode: PermissionMode;
  /** Appended to the agent's own system prompt, never replacing it. */
  systemPrompt?: string;
  allowedTools?: string[];
  /** Backend session id to continue. */
  resumeBackendId?: string;
  /** With `resumeBackendId`: continue in a new backend session (Claude only). */
  forkSession?: boolean;
  /** Extra environment merged over the daemon's. */
  env?: Record<string, string>;
}

/**
 * The decision on a `permission` event. `updatedInput` replaces the tool's input when it is allowed: the answers of a
 * question tool (Claude's AskUserQuestion `answers`) travel this way.
 */
export type PermissionDecision =
  { allow: true; updatedInput?: Record<string, unknown> } | { allow: false; message: string };

/** One live agent run: an async iterable of events plus the controls to steer it. */
export interface Run extends AsyncIterable<HarnessEvent> {
  /** Sends the next user message; queued by the backend if a turn is in flight. */
  send(text: string): void;
  /** Answers a pending `permission` event. */
  answerPermission(requestId: string, decision: PermissionDecision): void;
  /** Stops the current turn but keeps the session usable. */
  interrupt(): Promise<void>;
  /** No more input: the run finishes once the current turn is done. */
  end(): void;
  /** Stops the run now (SIGTERM, then SIGKILL after a grace period). */
  kill(): void;
  /** PID of the agent process currently running, if any. */
  readonly pid: number | undefined;
}

/** What `doctor` reports about a harness. */
export interface HarnessCheck {
  ok: boolean;
  executable: string;
  version?: string;
  problem?: string;
}

/** One coding-agent backend. */
export interface Harness {
  readonly name: HarnessName;
  /** Whether the backend can continue a session in a new backend session. */
  readonly supportsFork: boolean;
  /**
   * Whether runs outside `bypassPermissions` ask for approval through `permission` events (Claude through the SDK's
   * canUseTool, Codex through its app-server approval requests). False: the backend cannot ask (Gemini's headless mode).
   */
  readonly asksPermission: boolean;
  /** Starts a run; never throws for runtime failures (those arrive as an `exited` event). */
  start(spec: RunSpec): Run;
  /** Checks that the backend's executable is present and runs. */
  check(): Promise<HarnessCheck>;
}
