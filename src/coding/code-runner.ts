// The `code_run` backend: one coding-agent turn as a (durable, listed) coding session, watched by the session
// watchdog (inactivity, wall clock, tool time), answered as { success, output, error? } with the seed's error kinds:
// `timeout` (wall clock), `inactivity_timeout` (the watchdog saw no activity), `exit N` (the CLI exited with N).
// The launch carries its limits and the node that runs it arms the watchdog (code-run-watchdog.ts); the asking node
// waits for it wherever it runs (code-run-wait.ts). In a cluster the launch is placed like any other (`CodeRunCluster`).
import type { Clock } from '../core/clock.ts';
import type { Config, HarnessName, PermissionMode } from '../core/config.ts';
import type { AgentProfileConfig } from '../core/config-linear-agents.ts';
import { invalidInput } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { SessionLogs } from '../store/session-logs.ts';
import { waitForCodeRun } from './code-run-wait.ts';
import { CODE_RUN_OWNER, CodeRunWatchdogs, tripOfEndReason } from './code-run-watchdog.ts';
import type { LaunchRequest, SessionManager } from './session-manager.ts';

/** How often the asking node also reads the stored row of the turn it waits for (ms). */
const WAIT_POLL_MS = 2_000;

/** One code_run call. Unset fields come from the agent profile, then `linear.codeRun`, then the top-level config. */
export interface CodeRunRequest {
  prompt: string;
  harness?: HarnessName;
  workdir?: string;
  model?: string;
  /** Wall-clock limit in seconds. */
  timeoutSec?: number;
  /** Inactivity limit in seconds. */
  inactivitySec?: number;
  permissionMode?: PermissionMode;
  systemPrompt?: string;
  /** The agent profile of the caller (linear.profiles): its harness and model are used when the call names none. */
  profile?: string;
  /** Where the session's notifications go. */
  originChannel: string;
  /** The engine session that asked (its wake goes there). */
  originSessionId?: string | null;
}

/** The seed's answer shape. `error` is `timeout`, `inactivity_timeout`, `exit N`, `stopped` or the backend's own error. */
export interface CodeRunResult {
  success: boolean;
  output: string;
  error?: string;
  /** Detail of the error (the watchdog's reason, the backend's message). */
  detail?: string;
  sessionId: string;
  harness: HarnessName;
  /** Where the harness choice came from. */
  harnessSource: 'explicit' | 'profile' | 'config' | 'default';
}

export interface CodeRunnerDeps {
  config: Config;
  sessions: SessionManager;
  logs: SessionLogs;
  clock: Clock;
  logger: Logger;
  /**
   * The placement of a run that names none (Linear mention answers): the cluster's (main.ts binds it once the
   * operations' services exist), or undefined to run here (SQLite).
   */
  cluster?: () => CodeRunCluster | undefined;
}

/** The backend for a run: explicit > the caller's profile > `linear.codeRun.harness` > `defaultHarness` (default claude). */
export function resolveCodeRunHarness(
  config: Pick<Config, 'defaultHarness'> & { linear: { codeRun: { harness?: HarnessName | undefined } } },
  explicit: HarnessName | undefined,
  profile: Pick<AgentProfileConfig, 'harness'> | undefined,
): { harness: HarnessName; source: CodeRunResult['harnessSource'] } {
  if (explicit) return { harness: explicit, source: 'explicit' };
  if (profile?.harness) return { harness: profile.harness, source: 'profile' };
  if (config.linear.codeRun.harness) return { harness: config.linear.codeRun.harness, source: 'config' };
  return { harness: config.defaultHarness, source: 'default' };
}

/**
 * How code_run places its turn in a cluster on PostgreSQL (operations/code-run.ts builds it from ClusterSessions): the
 * cluster's launch path and a kill that reaches the node running the session.
 */
export interface CodeRunCluster {
  /** Places the launch like any other: refused when no node could ever run it, else started or queued; its id. */
  launch(request: LaunchRequest): Promise<{ id: string }>;
  /** Kills the session wherever it runs (a queued one never starts). */
  kill(id: string): Promise<void>;
}

/** Runs code_run turns, and arms the watchdog of those this node runs (whoever asked); one per daemon. */
export class CodeRunner {
  #d: CodeRunnerDeps;
  readonly watchdogs: CodeRunWatchdogs;

  constructor(deps: CodeRunnerDeps) {
    this.#d = deps;
    this.watchdogs = new CodeRunWatchdogs(deps);
    this.watchdogs.start();
  }

  /**
   * Runs one turn and resolves when it has ended (never rejects for what the agent did; throws invalid_input for a bad
   * request, and whatever the SessionManager or `cluster` throws when it cannot launch, e.g. the session limit or no
   * node that could run it). `signal` kills it wherever it runs. With `cluster` (default: the deps' `cluster`) the turn
   * is placed in the cluster and waited for on whichever node runs it; without, it runs here.
   */
  async run(
    request: CodeRunRequest,
    signal?: AbortSignal,
    cluster: CodeRunCluster | undefined = this.#d.cluster?.(),
  ): Promise<CodeRunResult> {
    const { config, sessions, clock, logger } = this.#d;
    const cr = config.linear.codeRun;
    const profile = request.profile ? config.linear.profiles[request.profile] : undefined;
    if (request.profile && !profile)
      throw invalidInput(`agent: no agent profile "${request.profile}" in linear.profiles`, 'agent');
    const { harness, source } = resolveCodeRunHarness(config, request.harness, profile);
    const model = request.model ?? (request.harness ? undefined : profile?.model);
    const limits = {
      inactivityMs: Math.round((request.inactivitySec ?? profile?.inactivitySec ?? cr.inactivitySec) * 1000),
      maxTotalMs: Math.round((request.timeoutSec ?? profile?.timeoutSec ?? cr.timeoutSec) * 1000),
      toolTimeoutMs: Math.round(cr.toolTimeoutSec * 1000),
    };
    const workdir = request.workdir ?? cr.workdir ?? config.defaultWorkdir;
    const launch: LaunchRequest = {
      prompt: request.prompt,
      harness,
      ...(model ? { model } : {}),
      ...(workdir ? { workdir } : {}),
      ...(request.systemPrompt ? { systemPrompt: request.systemPrompt } : {}),
      permissionMode: request.permissionMode ?? cr.permissionMode,
      multiTurn: false,
      originChannel: request.originChannel,
      originSessionId: request.originSessionId ?? null,
      owner: CODE_RUN_OWNER,
      watchdog: limits,
    };
    // In a cluster the turn is placed like any launch (and may wait in the queue); else it starts here, now.
    const id = cluster ? (await cluster.launch(launch)).id : (await sessions.launch(launch)).id;
    const kill = async (sessionId: string): Promise<void> => {
      if (cluster) await cluster.kill(sessionId);
      else if (sessions.liveById(sessionId)?.isActive) await sessions.kill(sessionId, 'stopped');
    };
    const {
      record,
      exitCode: code,
      stopped,
    } = await waitForCodeRun(
      {
        sessions,
        clock,
        logger,
        processGoneMs: config.timings.killGraceMs * 2 + 5_000,
        pollMs: WAIT_POLL_MS,
      },
      id,
      kill,
      signal,
    );
    const output = (await sessions.readOutputBlocks(record)).map((b) => b.text).join('\n\n');
    const base = {
      output: output.length > cr.maxOutputChars ? output.slice(-cr.maxOutputChars) : output,
      sessionId: id,
      harness,
      harnessSource: source,
    };
    const trip = record.status === 'killed' ? tripOfEndReason(record.endReason) : null;
    if (trip)
      return {
        ...base,
        success: false,
        error: trip.kind === 'total' ? 'timeout' : 'inactivity_timeout',
        detail: trip.detail,
      };
    if (stopped) return { ...base, success: false, error: 'stopped', detail: 'the run was stopped' };
    if (code !== null && code !== 0)
      return { ...base, success: false, error: `exit ${code}`, ...(record.error ? { detail: record.error } : {}) };
    if (record.status !== 'completed') return { ...base, success: false, error: record.error ?? record.status };
    return { ...base, success: true };
  }
}
