// The one durable work loop: kicked when work may be waiting, it drains by calling its step until the step reports
// nothing left, retries a failing step after a backoff, sleeps on the injected clock until the step's next due time,
// and stops cleanly (waiting for the step in flight). The work itself stays durable in the caller's store; the loop only
// decides when to look at it again.
import type { Clock, Timer } from './clock.ts';

/** What one step reports: `more` (call again now), `quiet` (nothing left until a kick), or a wake-up in `ms`. */
export type StepResult = 'more' | 'quiet' | { wakeInMs: number };

/** How a WorkLoop is built. */
export interface WorkLoopOptions {
  clock: Clock;
  /** Does one piece of work; a throw is retried after `retryDelay(failures)` (failures counted since the last success). */
  step: () => Promise<StepResult> | StepResult;
  /** Milliseconds to wait before running again after the `failures`-th failure in a row. */
  retryDelay: (failures: number) => number;
  /** Told of each failed step, with the delay before the retry (log it here). */
  onError?: (error: unknown, failures: number, retryInMs: number) => void;
  /** Called when a drain ends with nothing scheduled (no wake-up, no retry). */
  onQuiet?: () => void;
}

/**
 * A kickable drain loop on the clock. Kicks while a drain runs are coalesced into one more pass; a kick cancels a
 * wake-up the step asked for, but not a backoff after a failure (the kick is then kept until the backoff ends).
 */
export class WorkLoop {
  #o: WorkLoopOptions;
  #current: Promise<void> | null = null;
  #kicked = false;
  #timer: Timer | null = null;
  #backingOff = false;
  #failures = 0;
  #stopped = false;

  constructor(options: WorkLoopOptions) {
    this.#o = options;
  }

  /** True while a drain runs. */
  get running(): boolean {
    return this.#current !== null;
  }

  /** True while a wake-up or a retry is scheduled. */
  get scheduled(): boolean {
    return this.#timer !== null;
  }

  /** Asks for a drain: starts one on the next microtask, or one more pass after the drain now running. */
  kick(): void {
    if (this.#stopped) return;
    if (this.#current || this.#backingOff) {
      this.#kicked = true;
      return;
    }
    this.#timer?.cancel();
    this.#timer = null;
    this.#kicked = false;
    this.#current = Promise.resolve().then(() => this.#drain());
  }

  /**
   * Stops until the next `start`: cancels the wake-up, ignores later kicks, and resolves once the step in flight has
   * returned.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#timer = null;
    while (this.#current) await this.#current;
  }

  /**
   * Takes kicks again after `stop()` resolved, as a new loop would (no failures counted, no kick kept): a service
   * started again in the same process (a lease taken back) reuses its loop. A no-op on a loop never stopped.
   */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#failures = 0;
    this.#backingOff = false;
    this.#kicked = false;
  }

  /** Resolves once no drain runs (a scheduled wake-up or retry does not count). */
  async idle(): Promise<void> {
    while (this.#current) await this.#current;
  }

  /** Clears `#current` in the same synchronous run as the last decision, so a kick right after starts a new drain. */
  async #drain(): Promise<void> {
    while (!this.#stopped) {
      let result: StepResult;
      try {
        result = await this.#o.step();
        this.#failures = 0;
      } catch (error) {
        this.#current = null;
        this.#failures += 1;
        const delay = this.#o.retryDelay(this.#failures);
        this.#o.onError?.(error, this.#failures, delay);
        if (!this.#stopped) this.#backOff(delay);
        return;
      }
      if (result === 'more') continue;
      if (this.#kicked) {
        this.#kicked = false;
        continue;
      }
      this.#current = null;
      if (result !== 'quiet' && !this.#stopped) this.#wakeIn(result.wakeInMs);
      else this.#o.onQuiet?.();
      return;
    }
    this.#current = null;
  }

  #wakeIn(ms: number): void {
    this.#timer = this.#o.clock.after(ms, () => {
      this.#timer = null;
      this.kick();
    });
  }

  #backOff(ms: number): void {
    this.#backingOff = true;
    this.#kicked = false;
    this.#timer = this.#o.clock.after(ms, () => {
      this.#timer = null;
      this.#backingOff = false;
      this.kick();
    });
  }
}
