// The watchdog of `code_run` turns, armed by the node that runs them: a launch whose spec carries `watchdog` limits
// (owner `code_run`) is watched from the moment it starts on this node (inactivity, wall clock, tool time, fed by its
// own log records) and killed here when a limit passes, with a kill reason that names the limit. The limits therefore
// hold wherever the cluster placed the turn, and even when the node that asked for it is gone. The asking node reads
// the reason back from the stored session (`tripOfEndReason`) to answer `timeout` or `inactivity_timeout`.
import type { Clock } from '../core/clock.ts';
import { errorMessage } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { SessionLogs } from '../store/session-logs.ts';
import type { Session } from './session.ts';
import type { SessionManager } from './session-manager.ts';
import type { WatchdogTrip } from './session-watchdog.ts';
import { describeTrip, SessionWatchdog, watchdogEventOf } from './session-watchdog.ts';

/** The owner of the sessions code_run launches (LaunchSpec.owner). */
export const CODE_RUN_OWNER = 'code_run';

const REASON = /^code_run watchdog \((inactivity|total|tool)\): (.*)$/s;

/** The kill reason (the session's `endReason`) of a trip: `code_run watchdog (<kind>): <what passed its limit>`. */
export function tripEndReason(trip: WatchdogTrip): string {
  return `code_run watchdog (${trip.kind}): ${describeTrip(trip)}`;
}

/** The trip an `endReason` written by `tripEndReason` names (its kind and description), or null for any other. */
export function tripOfEndReason(endReason: string | null): { kind: WatchdogTrip['kind']; detail: string } | null {
  const match = endReason ? REASON.exec(endReason) : null;
  const kind = match?.[1];
  if (kind !== 'inactivity' && kind !== 'total' && kind !== 'tool') return null;
  return { kind, detail: match?.[2] ?? '' };
}

/** How the node's code_run watchdogs are built. */
export interface CodeRunWatchdogsDeps {
  sessions: SessionManager;
  logs: SessionLogs;
  clock: Clock;
  logger: Logger;
}

/** Arms a watchdog for every code_run session that starts on this node; one per daemon. */
export class CodeRunWatchdogs {
  readonly #d: CodeRunWatchdogsDeps;
  readonly #armed = new Map<string, () => void>();
  #off: (() => void) | null = null;

  constructor(deps: CodeRunWatchdogsDeps) {
    this.#d = deps;
  }

  /** Starts watching the node's sessions (idempotent); a session that ends has its watchdog stopped. */
  start(): void {
    if (this.#off) return;
    this.#off = this.#d.sessions.on((signal) => {
      if (signal.type === 'launched' && signal.kind === 'launch') this.#arm(signal.session);
      else if (signal.type === 'ended' || signal.type === 'interrupted') this.#disarm(signal.session.id);
    });
  }

  /** Stops every watchdog and the subscription. */
  stop(): void {
    this.#off?.();
    this.#off = null;
    for (const id of [...this.#armed.keys()]) this.#disarm(id);
  }

  /** How many sessions are watched now. */
  get watching(): number {
    return this.#armed.size;
  }

  #arm(session: Session): void {
    const { spec, id } = session.record;
    if (spec.owner !== CODE_RUN_OWNER || !spec.watchdog || this.#armed.has(id)) return;
    const { sessions, logs, clock, logger } = this.#d;
    const watchdog = new SessionWatchdog({
      clock,
      limits: spec.watchdog,
      onTrip: (trip) => {
        logger.warn({ session: id, trip }, `code_run watchdog: ${describeTrip(trip)}`);
        // A watchdog trips once; a session no longer live here (abandoned by a node declared lost) is not killed.
        this.#disarm(id);
        if (!sessions.liveById(id)?.isActive) return;
        sessions.kill(id, tripEndReason(trip)).catch((error: unknown) => {
          logger.warn({ err: errorMessage(error), session: id }, 'code_run could not kill its session');
        });
      },
    });
    const unsubscribe = logs.subscribe(id, (record) => {
      const event = watchdogEventOf(record);
      if (event) watchdog.observe(event);
    });
    this.#armed.set(id, () => {
      watchdog.stop();
      unsubscribe();
    });
    watchdog.start();
    if (!session.isActive) this.#disarm(id);
  }

  #disarm(id: string): void {
    const stop = this.#armed.get(id);
    if (!stop) return;
    this.#armed.delete(id);
    stop();
  }
}
