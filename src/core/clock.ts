/** A cancellable scheduled callback. */
export interface Timer {
  cancel(): void;
}

/** Time source and timer factory; injected everywhere so tests never sleep. */
export interface Clock {
  now(): number;
  /** Runs `fn` once after `ms` milliseconds. */
  after(ms: number, fn: () => void): Timer;
  /** Runs `fn` every `ms` milliseconds until cancelled. */
  every(ms: number, fn: () => void): Timer;
}

/** How the system clock's timers treat the process. */
export interface SystemClockOptions {
  /**
   * True: a pending timer keeps the process alive (a one-shot CLI waiting before it retries). Default false: timers
   * are unref'd so they never hold a daemon open.
   */
  holdProcess?: boolean;
}

/** Returns the wall clock backed by Node timers (unref'd unless `holdProcess`). */
export function systemClock(options: SystemClockOptions = {}): Clock {
  const hold = options.holdProcess === true;
  return {
    now: () => Date.now(),
    after(ms, fn) {
      const handle = setTimeout(fn, ms);
      if (!hold) handle.unref();
      return { cancel: () => clearTimeout(handle) };
    },
    every(ms, fn) {
      const handle = setInterval(fn, ms);
      if (!hold) handle.unref();
      return { cancel: () => clearInterval(handle) };
    },
  };
}

interface ManualTimer {
  due: number;
  interval: number | null;
  fn: () => void;
  cancelled: boolean;
  order: number;
}

/** A clock that only moves when `advance` is called; for unit tests of timers. */
export class ManualClock implements Clock {
  #now: number;
  #timers: ManualTimer[] = [];
  #order = 0;

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  after(ms: number, fn: () => void): Timer {
    return this.#add(ms, null, fn);
  }

  every(ms: number, fn: () => void): Timer {
    return this.#add(ms, ms, fn);
  }

  /** Number of timers still pending. */
  get pending(): number {
    return this.#timers.filter((t) => !t.cancelled).length;
  }

  /** Moves time forward by `ms`, firing every timer that falls due, in order. */
  advance(ms: number): void {
    const target = this.#now + ms;
    for (;;) {
      const next = this.#timers
        .filter((t) => !t.cancelled && t.due <= target)
        .sort((a, b) => a.due - b.due || a.order - b.order)[0];
      if (!next) break;
      this.#now = next.due;
      if (next.interval === null) next.cancelled = true;
      else next.due += next.interval;
      next.fn();
    }
    this.#timers = this.#timers.filter((t) => !t.cancelled);
    this.#now = target;
  }

  #add(ms: number, interval: number | null, fn: () => void): Timer {
    const timer: ManualTimer = {
      due: this.#now + Math.max(0, ms),
      interval,
      fn,
      cancelled: false,
      order: this.#order++,
    };
    this.#timers.push(timer);
    return { cancel: () => void (timer.cancelled = true) };
  }
}
