// Work that blocks the event loop (a launch: an fsync'd insert, a log file, a process spawn) let through one piece per
// turn of the loop, so that what else is waiting (health checks, other requests, agent output) is served in between.

/** Runs queued jobs one per event-loop turn, in order. */
export class TurnGate {
  #queue: (() => void)[] = [];
  #scheduled = false;

  /**
   * Runs `job` after the jobs queued before it, each in its own turn of the loop; settles with what `job` returns (or
   * the promise it returns settles with) or throws.
   */
  run<T>(job: () => T | PromiseLike<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push(() => {
        try {
          resolve(job());
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled || this.#queue.length === 0) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#queue.shift()?.();
      this.#schedule();
    });
  }
}

/** Resolves in a later turn of the event loop, after the I/O waiting now (health checks, requests) was served. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
