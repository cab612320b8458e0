// Whether a coding session waits for input, and why: the waiting reason, whether that wait was announced, and the two
// timers that move it (the safety net turns silence into `stalled`; the idle timeout ends a session left waiting). The
// session decides when it waits and what silence and idleness mean; this keeps the reason and the timers in step.
import type { Clock } from '../core/clock.ts';
import type { WaitingReason } from './session-log.ts';
import { SessionTimers } from './session-timers.ts';

/** What the waiting state runs its timers on, and whom it calls when they fire. */
export interface SessionWaitingOptions {
  clock: Clock;
  /** Silence (with nothing open) this long fires `onSilence`. */
  safetyNetMs: number;
  /** Waiting this long fires `onIdle`. */
  idleTimeoutMs: number;
  /** The safety net ran out: nothing was heard since it was last armed. The session decides whether it stalled. */
  onSilence: () => void;
  /** The idle timeout ran out; `reason` is what the session waits for now (null: it no longer waits). */
  onIdle: (reason: WaitingReason | null) => void;
}

/** One session's waiting reason and its safety-net and idle timers. */
export class SessionWaiting {
  readonly #timers: SessionTimers;
  #reason: WaitingReason | null = null;
  /** The current wait was announced (its `waiting` record written); also kept after activity broke a stall. */
  #announced = false;

  constructor(options: SessionWaitingOptions) {
    this.#timers = new SessionTimers({
      clock: options.clock,
      safetyNetMs: options.safetyNetMs,
      idleTimeoutMs: options.idleTimeoutMs,
      onSilence: options.onSilence,
      onIdle: () => options.onIdle(this.#reason),
    });
  }

  /** Why the session waits for input, or null while it works. */
  get reason(): WaitingReason | null {
    return this.#reason;
  }

  /**
   * The session waits for `reason`: the safety net stops and the idle timeout starts (again) from now. Returns true
   * when the wait is news to announce, false when this wait (or the stall it follows) was announced already.
   */
  enter(reason: WaitingReason): boolean {
    this.#timers.cancelSafetyNet();
    this.#reason = reason;
    this.#timers.restartIdle();
    if (this.#announced) return false;
    this.#announced = true;
    return true;
  }

  /**
   * New content from the agent: a `stalled` alarm (or a stall its activity already broke) was false, so the session
   * works again and its idle timeout stops. Any other wait stands.
   */
  content(): void {
    if (this.#reason === 'stalled' || (this.#reason === null && this.#announced)) {
      this.#reason = null;
      this.#announced = false;
      this.#timers.cancelIdle();
    }
  }

  /**
   * A sign of life with nothing to show while `stalled`: the session is not idle, so its idle timeout stops; the
   * alarm stays announced, so it is not repeated if the agent goes quiet again.
   */
  activity(): void {
    if (this.#reason !== 'stalled') return;
    this.#reason = null;
    this.#timers.cancelIdle();
  }

  /** A message arrived: the session works again (the next wait is news); the idle timeout stops. */
  resume(): void {
    this.#reason = null;
    this.#announced = false;
    this.#timers.cancelIdle();
  }

  /** Cancels the safety net and, when `quiet` (nothing open, the session running) and not waiting, arms it anew. */
  armSafetyNet(quiet: boolean): void {
    this.#timers.resetSafetyNet(quiet && this.#reason === null);
  }

  /** The session ended: both timers stop and it waits for nothing. */
  end(): void {
    this.#timers.cancelAll();
    this.#reason = null;
  }
}
