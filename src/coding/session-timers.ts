// A coding session's two timers on the injected Clock: the safety net (silence this long, with no tool call running,
// counts as waiting for input) and the idle timeout (a session left waiting this long is ended). When each may run is
// the session's state machine's to decide; this holds the handles, so each timer is armed at most once at a time.
import type { Clock, Timer } from '../core/clock.ts';

/** What the timers run on and whom they call when they fire. */
export interface SessionTimersOptions {
  clock: Clock;
  /** How long the safety net waits for a sign of progress. */
  safetyNetMs: number;
  /** How long the idle timer waits before the session is ended. */
  idleTimeoutMs: number;
  /** The safety net ran out: nothing was heard for `safetyNetMs` since it was last armed. */
  onSilence: () => void;
  /** The idle timer ran out: `idleTimeoutMs` passed since it was last started. */
  onIdle: () => void;
}

/** The safety-net and idle timers of one session; each fires once per arming and never after it is cancelled. */
export class SessionTimers {
  readonly #options: SessionTimersOptions;
  #safetyNet: Timer | null = null;
  #idle: Timer | null = null;

  constructor(options: SessionTimersOptions) {
    this.#options = options;
  }

  /** True while the safety net is armed and has not fired. */
  get safetyNetArmed(): boolean {
    return this.#safetyNet !== null;
  }

  /** True while the idle timer runs and has not fired. */
  get idleRunning(): boolean {
    return this.#idle !== null;
  }

  /** Cancels the safety net and, when `arm`, starts it again from now. */
  resetSafetyNet(arm: boolean): void {
    this.cancelSafetyNet();
    if (!arm) return;
    this.#safetyNet = this.#options.clock.after(this.#options.safetyNetMs, () => {
      this.#safetyNet = null;
      this.#options.onSilence();
    });
  }

  /** Cancels the safety net, if armed. */
  cancelSafetyNet(): void {
    this.#safetyNet?.cancel();
    this.#safetyNet = null;
  }

  /** Starts the idle timer from now (cancelling the one running, if any). */
  restartIdle(): void {
    this.#idle?.cancel();
    this.#idle = this.#options.clock.after(this.#options.idleTimeoutMs, () => {
      this.#idle = null;
      this.#options.onIdle();
    });
  }

  /** Cancels the idle timer, if running. */
  cancelIdle(): void {
    this.#idle?.cancel();
    this.#idle = null;
  }

  /** Cancels both timers. */
  cancelAll(): void {
    this.cancelSafetyNet();
    this.cancelIdle();
  }
}
