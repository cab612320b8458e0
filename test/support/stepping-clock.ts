// A manual clock for services whose timer callbacks start asynchronous work (a store read or write before the next
// timer is set): time moves one due timer at a time, and each timer's work settles before time moves on, as it does
// with the real clock.
import type { Clock, Timer } from '../../src/core/clock.ts';
import { ManualClock } from '../../src/core/clock.ts';

/** Lets every queued microtask run (the SQLite store answers within them). */
function nextMacrotask(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Bound on the timers fired in one `advance`, so a timer that re-arms itself at the same instant fails the test. */
const MAX_STEPS = 100_000;

/**
 * A ManualClock whose `advance` fires the timers due on the way one instant at a time and awaits `settle` (default: the
 * next macrotask) after each, so a timer set by work a timer started still fires within the same `advance`.
 */
export class SteppingClock implements Clock {
  readonly #manual: ManualClock;
  readonly #settle: () => Promise<void>;
  /** Due times of the timers set through this clock and not yet fired or cancelled. */
  readonly #due = new Set<{ at: number }>();

  constructor(start?: number, settle: () => Promise<void> = nextMacrotask) {
    this.#manual = new ManualClock(start);
    this.#settle = settle;
  }

  now(): number {
    return this.#manual.now();
  }

  after(ms: number, fn: () => void): Timer {
    const entry = { at: this.now() + Math.max(0, ms) };
    this.#due.add(entry);
    const timer = this.#manual.after(ms, () => {
      this.#due.delete(entry);
      fn();
    });
    return {
      cancel: () => {
        this.#due.delete(entry);
        timer.cancel();
      },
    };
  }

  every(ms: number, fn: () => void): Timer {
    const entry = { at: this.now() + Math.max(0, ms) };
    this.#due.add(entry);
    const timer = this.#manual.every(ms, () => {
      entry.at += ms;
      fn();
    });
    return {
      cancel: () => {
        this.#due.delete(entry);
        timer.cancel();
      },
    };
  }

  /** Moves time forward by `ms`, instant by instant, settling after the timers of each instant fired. */
  async advance(ms: number): Promise<void> {
    const target = this.now() + ms;
    for (let step = 0; ; step++) {
      if (step >= MAX_STEPS)
        throw new Error(
          `SteppingClock: more than ${MAX_STEPS} timers fired in one advance (a timer re-arming at the same instant?)`,
        );
      let next = Infinity;
      for (const entry of this.#due) if (entry.at < next) next = entry.at;
      if (next > target) break;
      this.#manual.advance(next - this.now());
      await this.#settle();
    }
    this.#manual.advance(target - this.now());
    await this.#settle();
  }
}
