// Watching the coding sessions of dispatches: each running worker or auditor has a watchdog fed from its session log
// (which also streams its text and tool calls to Linear and marks the dispatch active); a trip kills the session.
import type { Session } from '../../coding/session.ts';
import type { WatchdogTrip } from '../../coding/session-watchdog.ts';
import {
  describeTrip,
  resolveWatchdogLimits,
  SessionWatchdog,
  watchdogEventOf,
} from '../../coding/session-watchdog.ts';
import { summarizeToolInput } from '../../coding/tool-summary.ts';
import type { Clock } from '../../core/clock.ts';
import type { LinearPipelineConfig } from '../../core/config-linear-pipeline.ts';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { LogRecord } from '../../store/jsonl-log.ts';
import type { DispatchPhase, DispatchRecord } from '../../store/linear-dispatch-types.ts';
import type { DispatchStore } from '../../store/linear-dispatches.ts';
import type { SessionLogs } from '../../store/session-logs.ts';
import type { ActivityStream } from './activity-stream.ts';
import { InFlight } from './in-flight.ts';

/** Activity records of a session log are touched into the dispatch at most this often. */
const TOUCH_EVERY_MS = 30_000;

/** What the watch is built from. */
export interface SessionWatchDeps {
  clock: Clock;
  logger: Logger;
  /** The SessionLogs instance the SessionManager writes through. */
  logs: Pick<SessionLogs, 'subscribe'>;
  sessions: {
    liveById(sessionId: string): Pick<Session, 'isActive'> | undefined;
    kill(sessionId: string, reason: string): Promise<unknown>;
  };
  store: Pick<DispatchStore, 'touch' | 'setEndCause'>;
  /** Where the worker's text and the sessions' tool calls are streamed. */
  reporter: { stream(d: DispatchRecord): Pick<ActivityStream, 'thought' | 'action'> | null };
  /** The profiles' and the pipeline's watchdog limits. */
  pc: Pick<LinearPipelineConfig, 'profiles' | 'watchdog'>;
}

interface Watched {
  watchdog: SessionWatchdog;
  unsubscribe: () => void;
}

/** The watchdogs and log subscriptions of the pipeline's running sessions, and the activity marks of dispatches. */
export class SessionWatch {
  #deps: SessionWatchDeps;
  #watched = new Map<string, Watched>();
  #trips = new Map<string, WatchdogTrip>();
  #touched = new Map<string, number>();
  #inFlight = new InFlight();

  constructor(deps: SessionWatchDeps) {
    this.#deps = deps;
  }

  /** Records activity on a dispatch (at most every 30 s per dispatch, unless `force`); resolves once it is stored. */
  async touch(dispatchId: string, force = false): Promise<void> {
    const now = this.#deps.clock.now();
    const last = this.#touched.get(dispatchId) ?? Number.NEGATIVE_INFINITY;
    if (!force && now - last < TOUCH_EVERY_MS) return;
    this.#touched.set(dispatchId, now);
    await this.#deps.store.touch(dispatchId, now);
  }

  /** Starts the watchdog of a session and feeds it (and the Linear stream) from the session's log. */
  watch(d: DispatchRecord, sessionId: string, phase: DispatchPhase): void {
    this.unwatch(sessionId);
    const { clock, logger, logs, pc } = this.#deps;
    const limits = resolveWatchdogLimits(d.profile ? pc.profiles[d.profile] : undefined, pc.watchdog);
    const watchdog = new SessionWatchdog({
      clock,
      limits,
      onTrip: (trip) =>
        this.#inFlight.run(
          () => this.#onTrip(d, sessionId, phase, trip),
          (error) => logger.error({ err: error, session: sessionId }, 'pipeline watchdog could not end a session'),
        ),
    });
    const unsubscribe = logs.subscribe(sessionId, (record) => {
      try {
        this.#onLogRecord(d, phase, watchdog, record);
      } catch (error) {
        logger.error({ err: error, session: sessionId }, 'pipeline could not follow a session log record');
      }
    });
    this.#watched.set(sessionId, { watchdog, unsubscribe });
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

  /** True while the session's watchdog runs. */
  isWatched(sessionId: string): boolean {
    return this.#watched.has(sessionId);
  }

  /** The watchdog trip that ended a session, if this process saw it. */
  tripOf(sessionId: string): WatchdogTrip | undefined {
    return this.#trips.get(sessionId);
  }

  /** True while a trip or an activity mark is being stored. */
  get busy(): boolean {
    return this.#inFlight.busy;
  }

  /** Resolves once the trips and activity marks started so far are stored (and a tripped session killed). */
  settled(): Promise<void> {
    return this.#inFlight.settled();
  }

  /** Stops every watchdog and log subscription. */
  stopAll(): void {
    for (const sessionId of [...this.#watched.keys()]) this.unwatch(sessionId);
  }

  #onLogRecord(d: DispatchRecord, phase: DispatchPhase, watchdog: SessionWatchdog, record: LogRecord): void {
    const event = watchdogEventOf(record);
    if (!event) return;
    watchdog.observe(event);
    this.#inFlight.run(
      () => this.touch(d.id),
      (error) =>
        this.#deps.logger.error({ err: error, dispatch: d.id }, 'pipeline could not record activity on a dispatch'),
    );
    const stream = this.#deps.reporter.stream(d);
    if (!stream) return;
    if (record.type === 'output' && phase === 'worker' && typeof record.text === 'string') stream.thought(record.text);
    if (record.type === 'tool') {
      const name = String(record.name);
      stream.action(phase === 'worker' ? `Running ${name}` : `Auditor: ${name}`, summarizeToolInput(record.input));
    }
  }

  async #onTrip(d: DispatchRecord, sessionId: string, phase: DispatchPhase, trip: WatchdogTrip): Promise<void> {
    this.#trips.set(sessionId, trip);
    const { sessions, store, logger } = this.#deps;
    if (!sessions.liveById(sessionId)?.isActive) return;
    if (!(await store.setEndCause(sessionId, 'watchdog'))) return;
    const reason = describeTrip(trip);
    logger.warn({ dispatch: d.id, session: sessionId, phase, trip }, `pipeline watchdog: ${reason}`);
    sessions.kill(sessionId, `watchdog: ${reason}`).catch((error: unknown) => {
      logger.warn({ err: errorMessage(error), session: sessionId }, 'watchdog could not kill the session');
    });
  }
}
