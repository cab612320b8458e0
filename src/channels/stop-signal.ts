import type { Clock } from '../core/clock.ts';

/** What `StopSignal.race` resolves with. */
export type RaceOutcome<T> = { stopped: false; value: T } | { stopped: true };

/**
 * A stop flag that long-lived loops can race their waits against. Each wait registers its own listener and withdraws it
 * when done, so a service that waits millions of times does not pile reactions onto one never-settling promise.
 */
export class StopSignal {
  #stopped = false;
  #listeners = new Set<() => void>();

  get stopped(): boolean {
    return this.#stopped;
  }

  /** Number of waits currently registered (withdrawn as each one settles). */
  get waiting(): number {
    return this.#listeners.size;
  }

  /** Sets the flag and wakes every pending wait. */
  stop(): void {
    this.#stopped = true;
    for (const listener of [...this.#listeners]) listener();
    this.#listeners.clear();
  }

  /** Settles with `promise` (rejecting if it rejects), or with `{ stopped: true }` as soon as `stop()` is called. */
  async race<T>(promise: Promise<T>): Promise<RaceOutcome<T>> {
    const settled = promise.then((value): RaceOutcome<T> => ({ stopped: false, value }));
    if (this.#stopped) {
      settled.catch(() => {});
      return { stopped: true };
    }
    let listener: () => void = () => {};
    const stop = new Promise<RaceOutcome<T>>((resolve) => {
      listener = () => resolve({ stopped: true });
      this.#listeners.add(listener);
    });
    try {
      return await Promise.race([settled, stop]);
    } finally {
      this.#listeners.delete(listener);
    }
  }

  /** Waits `ms` on `clock`; true when the time passed, false when stopped first. */
  async sleep(clock: Clock, ms: number): Promise<boolean> {
    let timer: { cancel(): void } | null = null;
    const elapsed = new Promise<void>((resolve) => (timer = clock.after(ms, resolve)));
    try {
      return !(await this.race(elapsed)).stopped;
    } finally {
      (timer as { cancel(): void } | null)?.cancel();
    }
  }
}
