// The `code_run` backend: one coding-agent turn as a (durable, listed) coding session, watched by the session
// watchdog (inactivity, wall clock, tool time), answered as { success, output, error? } with the seed's error kinds:
// `timeout` (wall clock), `inactivity_timeout` (the watchdog saw no activity), `exit N` (the CLI exited with N).
import type { Clock } from '../core/clock.ts';
import type { Config, HarnessName, PermissionMode } from '../core/config.ts';
import type { AgentProfileConfig } from '../core/config-linear-agents.ts';
import { errorMessage, invalidInput } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { StoredSession } from '../store/coding-sessions.ts';
import type { SessionLogs } from '../store/session-logs.ts';
import type { SessionManager } from './session-manager.ts';
import type { WatchdogTrip } from './session-watchdog.ts';
import { describeTrip, SessionWatchdog, watchdogEventOf } from './session-watchdog.ts';

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

/** Log records the session writes itself when it launches (not signs of a running agent process). */
const LAUNCH_RECORDS = new Set(['created', 'run', 'user', 'status']);

/** The exit code in an `exited` record: its code, or the one an SDK error message names ("exited with code 3"). */
function exitCodeOf(record: Readonly<Record<string, unknown>>): number | null {
  if (typeof record.code === 'number') return record.code;
  const match = typeof record.error === 'string' ? /exit(?:ed)?(?: with)?(?: code)?\s+(\d+)/i.exec(record.error) : null;
  return match ? Number(match[1]) : null;
}

/** Runs code_run turns; one per daemon. */
export class CodeRunner {
  #d: CodeRunnerDeps;

  constructor(deps: CodeRunnerDeps) {
    this.#d = deps;
  }

  /**
   * Runs one turn and resolves when it has ended (never rejects for what the agent did; throws invalid_input for a bad
   * request, and whatever the SessionManager throws when it cannot launch, e.g. the session limit). `signal` kills it.
   */
  async run(request: CodeRunRequest, signal?: AbortSignal): Promise<CodeRunResult> {
    const { config, sessions, logs, clock, logger } = this.#d;
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
    const session = await sessions.launch({
      prompt: request.prompt,
      harness,
      ...(model ? { model } : {}),
      ...(workdir ? { workdir } : {}),
      ...(request.systemPrompt ? { systemPrompt: request.systemPrompt } : {}),
      permissionMode: request.permissionMode ?? cr.permissionMode,
      multiTurn: false,
      originChannel: request.originChannel,
      originSessionId: request.originSessionId ?? null,
      owner: 'code_run',
    });
    const id = session.id;
    let exitCode: number | null = null;
    let trip: WatchdogTrip | null = null;
    let stopped = false;
    const kill = (reason: string): void => {
      if (!sessions.liveById(id)?.isActive) return;
      sessions.kill(id, reason).catch((error: unknown) => {
        logger.warn({ err: errorMessage(error), session: id }, 'code_run could not kill its session');
      });
    };
    const watchdog = new SessionWatchdog({
      clock,
      limits,
      onTrip: (t) => {
        trip = t;
        logger.warn({ session: id, trip: t }, `code_run watchdog: ${describeTrip(t)}`);
        kill(`watchdog: ${describeTrip(t)}`);
      },
    });
    const ended = new Promise<void>((resolve) => {
      const off = sessions.on((s) => {
        if (s.type === 'ended' && s.session.id === id) {
          off();
          resolve();
        }
      });
      if (!sessions.liveById(id)?.isActive) {
        off();
        resolve();
      }
    });
    let exited: () => void = () => undefined;
    let gone = false;
    let agentSeen = false;
    const processGone = new Promise<void>((resolve) => (exited = resolve));
    const unsubscribe = logs.subscribe(id, (record) => {
      if (record.type === 'exited') {
        exitCode = exitCodeOf(record);
        gone = true;
        exited();
      } else if (!LAUNCH_RECORDS.has(record.type)) {
        agentSeen = true;
      }
      const event = watchdogEventOf(record);
      if (event) watchdog.observe(event);
    });
    const onAbort = (): void => {
      stopped = true;
      kill('stopped');
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    watchdog.start();
    try {
      await ended;
      // Answer once the agent process is gone (a killed one gets SIGKILL after killGraceMs), so nothing keeps writing in
      // the working directory after code_run returned. A run whose agent never started has no process to wait for.
      if (agentSeen && !gone) {
        let bound: { cancel(): void } | undefined;
        await Promise.race([
          processGone,
          new Promise<void>((resolve) => (bound = clock.after(config.timings.killGraceMs * 2 + 5_000, resolve))),
        ]);
        bound?.cancel();
      }
    } finally {
      watchdog.stop();
      unsubscribe();
      signal?.removeEventListener('abort', onAbort);
    }
    const record: StoredSession = await sessions.get(id);
    const output = sessions
      .outputBlocks(record)
      .map((b) => b.text)
      .join('\n\n');
    const base = {
      output: output.length > cr.maxOutputChars ? output.slice(-cr.maxOutputChars) : output,
      sessionId: id,
      harness,
      harnessSource: source,
    };
    const firedTrip = trip as WatchdogTrip | null;
    if (firedTrip)
      return {
        ...base,
        success: false,
        error: firedTrip.kind === 'total' ? 'timeout' : 'inactivity_timeout',
        detail: describeTrip(firedTrip),
      };
    if (stopped) return { ...base, success: false, error: 'stopped', detail: 'the run was stopped' };
    const code = exitCode as number | null;
    if (code !== null && code !== 0)
      return { ...base, success: false, error: `exit ${code}`, ...(record.error ? { detail: record.error } : {}) };
    if (record.status !== 'completed') return { ...base, success: false, error: record.error ?? record.status };
    return { ...base, success: true };
  }
}
