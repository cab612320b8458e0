// Shared machinery of the pipeline: per-dispatch serial execution, the Linear activity streams, artifacts, the
// watchdogs of running sessions (fed from their session logs), prompts loading and telling the user.
import { join } from 'node:path';
import type { Clock } from '../../core/clock.ts';
import type { Config } from '../../core/config.ts';
import type { LinearPipelineConfig } from '../../core/config-linear-pipeline.ts';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { SessionManager } from '../../coding/session-manager.ts';
import { summarizeToolInput } from '../../coding/tool-summary.ts';
import { readTextIfExists } from '../../store/artifact-files.ts';
import type { DatabaseSync } from '../../store/database.ts';
import type { LogRecord } from '../../store/jsonl-log.ts';
import { DispatchStore } from '../../store/linear-dispatches.ts';
import { LinearEffectStore } from '../../store/linear-effects.ts';
import type { DispatchPhase, DispatchRecord } from '../../store/linear-dispatches.ts';
import type { SessionLogs } from '../../store/session-logs.ts';
import type { ActivityContent, LinearApi } from '../api/types.ts';
import { LinearEffects } from '../effects.ts';
import { ActivityStream } from './activity-stream.ts';
import { ARTIFACT_DIR, DispatchArtifacts } from './artifacts.ts';
import { DEFAULT_PROMPTS, mergePrompts, parsePromptsFile } from './prompts.ts';
import type { PromptSet } from './prompts.ts';
import type { DispatchGuard, PipelineNotifier } from './types.ts';
import { describeTrip, resolveWatchdogLimits, SessionWatchdog, watchdogEventOf } from '../../coding/session-watchdog.ts';
import type { WatchdogTrip } from '../../coding/session-watchdog.ts';

/** What the pipeline is built from (main.ts hands these in). */
export interface PipelineDeps {
  config: Config;
  clock: Clock;
  logger: Logger;
  /** The daemon's SQLite database (migrations 420+ applied). */
  db: DatabaseSync;
  /** The coding sessions; `restore()` must have run before `Pipeline.start()`. */
  sessions: SessionManager;
  /** The SessionLogs instance the SessionManager writes through (the watchdogs subscribe to it). */
  logs: SessionLogs;
  linear: LinearApi;
  notifier: PipelineNotifier;
  /** Checked before a new dispatch is created (the planner's planning-mode guard); none: everything may be dispatched. */
  guard?: DispatchGuard;
}

/** Activity records of a session log are touched into the dispatch at most this often. */
const TOUCH_EVERY_MS = 30_000;
const PROMPTS_FILE = join(ARTIFACT_DIR, 'prompts.yaml');

interface Watched {
  dispatchId: string;
  phase: DispatchPhase;
  watchdog: SessionWatchdog;
  unsubscribe: () => void;
}

/** The pipeline's shared state and helpers; one per Pipeline. */
export class PipelineRuntime {
  readonly deps: PipelineDeps;
  readonly store: DispatchStore;
  /** The durable ledger of what was told to Linear (keyed effects are sent once). */
  readonly effects: LinearEffects;
  /** Dispatches whose next phase waits for a free coding-session slot (maxSessions). */
  readonly waitingForSlot = new Set<string>();
  /** Called when a dispatch gives its slot back (the Pipeline sets it to take the next queued one). */
  slotFreed: () => void = () => undefined;
  #chains = new Map<string, { tail: Promise<void>; pending: number }>();
  #streams = new Map<string, ActivityStream>();
  #artifacts = new Map<string, DispatchArtifacts>();
  #watched = new Map<string, Watched>();
  #trips = new Map<string, WatchdogTrip>();
  #touched = new Map<string, number>();

  constructor(deps: PipelineDeps) {
    this.deps = deps;
    this.store = new DispatchStore(deps.db);
    this.effects = new LinearEffects(new LinearEffectStore(deps.db), deps.clock, deps.logger);
  }

  get pc(): LinearPipelineConfig {
    return this.deps.config.linear.pipeline;
  }

  now(): number {
    return this.deps.clock.now();
  }

  /**
   * Runs `fn` after every earlier task of the same dispatch has finished, so the steps of one dispatch never
   * interleave. Errors are logged (the monitor's reconcile pass picks the dispatch up again); never rejects.
   */
  serial(dispatchId: string, label: string, fn: () => Promise<void>): Promise<void> {
    const chain = this.#chains.get(dispatchId) ?? { tail: Promise.resolve(), pending: 0 };
    chain.pending += 1;
    const next = chain.tail.then(fn).catch((error: unknown) => {
      this.deps.logger.error({ err: error, dispatch: dispatchId, step: label }, 'pipeline step failed');
      this.store.update(dispatchId, { lastError: `${label}: ${errorMessage(error)}` }, this.now());
    });
    chain.tail = next.finally(() => {
      chain.pending -= 1;
      if (chain.pending === 0 && this.#chains.get(dispatchId) === chain) this.#chains.delete(dispatchId);
    });
    this.#chains.set(dispatchId, chain);
    return next;
  }

  /** True while a step of the dispatch is queued or running. */
  busy(dispatchId: string): boolean {
    return (this.#chains.get(dispatchId)?.pending ?? 0) > 0;
  }

  /** Resolves when every queued step of every dispatch has run. */
  async settle(): Promise<void> {
    while (this.#chains.size > 0) await Promise.all([...this.#chains.values()].map((c) => c.tail));
  }

  /** The Linear activity stream of a dispatch, or null when it has no agent session. */
  stream(d: DispatchRecord): ActivityStream | null {
    if (!d.agentSessionId) return null;
    let stream = this.#streams.get(d.id);
    if (!stream || stream.agentSessionId !== d.agentSessionId) {
      stream = new ActivityStream({
        linear: this.deps.linear,
        agentSessionId: d.agentSessionId,
        clock: this.deps.clock,
        logger: this.deps.logger,
        throttleMs: this.pc.activityThrottleMs,
      });
      this.#streams.set(d.id, stream);
    }
    return stream;
  }

  /** Buffers a thought for the dispatch's agent session (no-op without one). */
  thought(d: DispatchRecord, body: string): void {
    this.stream(d)?.thought(body);
  }

  /**
   * Links the dispatch's Linear agent session to the coding session's live view on the web page (the agent session's
   * external URL), so people can watch the work from Linear. Best effort: a failure is logged, the dispatch goes on.
   */
  async linkSession(d: DispatchRecord, codingSessionId: string): Promise<void> {
    const gateway = this.deps.config.gateway;
    const base = gateway.publicUrl ?? (gateway.port > 0 ? `http://127.0.0.1:${gateway.port}` : undefined);
    if (!d.agentSessionId || !base) return;
    const url = `${base.replace(/\/+$/, '')}/#session=${encodeURIComponent(codingSessionId)}`;
    try {
      await this.deps.linear.updateAgentSession(d.agentSessionId, { externalUrls: [{ label: 'switchboard: live session', url }] });
    } catch (error) {
      this.deps.logger.warn({ err: errorMessage(error), dispatch: d.id }, 'could not set the Linear agent session link');
    }
  }

  /**
   * Posts a message to the dispatch's agent session right away. A response, error or elicitation that cannot go
   * there (no agent session, or Linear refused it) becomes one comment on the issue instead, never both.
   */
  async tell(d: DispatchRecord, content: ActivityContent): Promise<void> {
    const stream = this.stream(d);
    if (stream && (await stream.post(content))) return;
    if (content.type === 'thought' || content.type === 'action') return;
    try {
      await this.deps.linear.createComment(d.issueId, content.body);
    } catch (error) {
      this.deps.logger.error({ err: errorMessage(error), dispatch: d.id }, 'could not post a Linear comment');
    }
  }

  /**
   * `tell`, once for the effect `key` across crashes and redeliveries: after whatever the dispatch's stream has
   * buffered, the activity is created with the key's client id (exactly once, see effects.ts). A response, error or
   * elicitation Linear refuses becomes one comment on the issue (keyed too). Failures are logged.
   */
  async tellOnce(d: DispatchRecord, content: ActivityContent, key: string): Promise<void> {
    const { linear, logger } = this.deps;
    const stream = this.stream(d);
    const agentSessionId = d.agentSessionId;
    if (stream && agentSessionId && stream.alive) {
      await stream.flush();
      try {
        await this.effects.run(key, 'keyed', (id) => linear.createAgentActivity(agentSessionId, content, { id }));
        return;
      } catch (error) {
        logger.warn({ err: errorMessage(error), dispatch: d.id, effect: key }, 'could not post a Linear agent activity');
      }
    }
    if (content.type === 'thought' || content.type === 'action') return;
    try {
      await this.effects.run(`${key}/comment`, 'keyed', (id) => linear.createComment(d.issueId, content.body, { id }));
    } catch (error) {
      logger.error({ err: errorMessage(error), dispatch: d.id, effect: key }, 'could not post a Linear comment');
    }
  }

  /** Tells the user in Linear and on their chat channel that a dispatch is stuck, and records it. */
  async tellStuck(d: DispatchRecord, reason: string): Promise<void> {
    const next = d.agentSessionId ? 'Send a message in this agent session to try again with your guidance.' : 'Assign the issue again to retry.';
    const body = `${d.identifier} is stuck: ${reason}\n\n${next}`;
    await this.record(d, 'stuck', { reason });
    await this.tell(d, { type: 'error', body });
    try {
      await this.deps.notifier.notify(`Linear ${d.identifier} (${d.title}) is stuck: ${reason}`);
    } catch (error) {
      this.deps.logger.error({ err: errorMessage(error), dispatch: d.id }, 'could not notify the user');
    }
  }

  /** Tells the user's chat channel that a dispatch is done (when the notifier wants to hear it); failures are logged. */
  async notifyDone(d: DispatchRecord, verdict: { testResults: string }): Promise<void> {
    if (!this.deps.notifier.done) return;
    try {
      await this.deps.notifier.done(`Linear ${d.identifier} (${d.title}) is done: the audit passed on attempt ${d.attempt - d.roundStart + 1}${verdict.testResults ? ` (tests: ${verdict.testResults})` : ''}. Branch ${d.branch}.`);
    } catch (error) {
      this.deps.logger.error({ err: errorMessage(error), dispatch: d.id }, 'could not notify the user');
    }
  }

  /** The artifacts of a dispatch, or null before its worktree exists. */
  artifacts(d: DispatchRecord): DispatchArtifacts | null {
    if (!d.worktreePath) return null;
    let artifacts = this.#artifacts.get(d.id);
    if (!artifacts) {
      artifacts = new DispatchArtifacts(d.worktreePath, { now: () => this.now(), maxWorkerBytes: this.pc.workerOutputMaxBytes });
      this.#artifacts.set(d.id, artifacts);
    }
    return artifacts;
  }

  /** Appends `event` to the dispatch's log.jsonl and rewrites its manifest; failures are logged, not thrown. */
  async record(d: DispatchRecord, event: string, fields: Record<string, unknown> = {}): Promise<void> {
    this.deps.logger.info({ dispatch: d.id, issue: d.identifier, event }, `pipeline: ${event}`);
    const artifacts = this.artifacts(d);
    if (!artifacts) return;
    try {
      const fresh = this.store.get(d.id) ?? d;
      await artifacts.log(event, { dispatchId: d.id, status: fresh.status, attempt: fresh.attempt, ...fields });
      await artifacts.manifest(fresh, fresh.context.issueUrl ?? null);
    } catch (error) {
      this.deps.logger.error({ err: errorMessage(error), dispatch: d.id, event }, 'could not write pipeline artifacts');
    }
  }

  /** The prompts for a repository: defaults merged with `<repo>/.switchboard/prompts.yaml`; throws when that file is invalid. */
  async prompts(repo: string): Promise<PromptSet> {
    const path = join(repo, PROMPTS_FILE);
    const text = await readTextIfExists(path);
    return text === null ? DEFAULT_PROMPTS : mergePrompts(DEFAULT_PROMPTS, parsePromptsFile(text, path));
  }

  /** Records activity on a dispatch (at most every 30 s per dispatch). */
  touch(dispatchId: string, force = false): void {
    const now = this.now();
    const last = this.#touched.get(dispatchId) ?? Number.NEGATIVE_INFINITY;
    if (!force && now - last < TOUCH_EVERY_MS) return;
    this.#touched.set(dispatchId, now);
    this.store.touch(dispatchId, now);
  }

  /** Starts the watchdog of a session and feeds it (and the Linear stream) from the session's log. */
  watch(d: DispatchRecord, sessionId: string, phase: DispatchPhase): void {
    this.unwatch(sessionId);
    const limits = resolveWatchdogLimits(d.profile ? this.pc.profiles[d.profile] : undefined, this.pc.watchdog);
    const watchdog = new SessionWatchdog({ clock: this.deps.clock, limits, onTrip: (trip) => this.#onTrip(d, sessionId, phase, trip) });
    const unsubscribe = this.deps.logs.subscribe(sessionId, (record) => {
      try {
        this.#onLogRecord(d, phase, watchdog, record);
      } catch (error) {
        this.deps.logger.error({ err: error, session: sessionId }, 'pipeline could not follow a session log record');
      }
    });
    this.#watched.set(sessionId, { dispatchId: d.id, phase, watchdog, unsubscribe });
    watchdog.start();
  }

  /** Stops following a session. */
  unwatch(sessionId: string): void {
    const watched = this.#watched.get(sessionId);
    if (!watched) return;
    watched.watchdog.stop();
    watched.unsubscribe();
    this.#watched.delete(sessionId);
  }

  isWatched(sessionId: string): boolean {
    return this.#watched.has(sessionId);
  }

  /** The watchdog trip that ended a session, if this process saw it. */
  tripOf(sessionId: string): WatchdogTrip | undefined {
    return this.#trips.get(sessionId);
  }

  /** Sends what is buffered for a dispatch and forgets its stream and artifact handles. */
  async release(dispatchId: string): Promise<void> {
    const stream = this.#streams.get(dispatchId);
    this.#streams.delete(dispatchId);
    await stream?.close();
    const artifacts = this.#artifacts.get(dispatchId);
    this.#artifacts.delete(dispatchId);
    await artifacts?.close();
  }

  /** Stops every watchdog and log subscription and flushes every stream and artifact log. */
  async shutdown(): Promise<void> {
    for (const sessionId of [...this.#watched.keys()]) this.unwatch(sessionId);
    await this.settle();
    await Promise.all([...this.#streams.keys(), ...this.#artifacts.keys()].map((id) => this.release(id)));
  }

  #onLogRecord(d: DispatchRecord, phase: DispatchPhase, watchdog: SessionWatchdog, record: LogRecord): void {
    const event = watchdogEventOf(record);
    if (!event) return;
    watchdog.observe(event);
    this.touch(d.id);
    const stream = this.stream(d);
    if (!stream) return;
    if (record.type === 'output' && phase === 'worker' && typeof record.text === 'string') stream.thought(record.text);
    if (record.type === 'tool') {
      const name = String(record.name);
      stream.action(phase === 'worker' ? `Running ${name}` : `Auditor: ${name}`, summarizeToolInput(record.input));
    }
  }

  #onTrip(d: DispatchRecord, sessionId: string, phase: DispatchPhase, trip: WatchdogTrip): void {
    this.#trips.set(sessionId, trip);
    const live = this.deps.sessions.live(sessionId);
    if (!live?.isActive) return;
    if (!this.store.setEndCause(sessionId, 'watchdog')) return;
    const reason = describeTrip(trip);
    this.deps.logger.warn({ dispatch: d.id, session: sessionId, phase, trip }, `pipeline watchdog: ${reason}`);
    try {
      this.deps.sessions.kill(sessionId, `watchdog: ${reason}`);
    } catch (error) {
      this.deps.logger.warn({ err: errorMessage(error), session: sessionId }, 'watchdog could not kill the session');
    }
  }
}
