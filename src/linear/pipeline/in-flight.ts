// The pipeline's background store work that runs outside a dispatch's lane (a session signal looked up before it is
// queued, a watchdog trip recording its cause before the kill, an activity mark): tracked so `idle()` covers it.

/** Promises started and not yet settled; failures go to `onError` (they are never dropped silently). */
export class InFlight {
  #pending = new Set<Promise<void>>();

  /** Runs `work` now, keeps it until it settles, and hands a failure to `onError`. */
  run(work: () => Promise<void>, onError: (error: unknown) => void): void {
    const running = work().catch(onError);
    this.#pending.add(running);
    void running.finally(() => this.#pending.delete(running));
  }

  /** True while some work has not settled. */
  get busy(): boolean {
    return this.#pending.size > 0;
  }

  /** Resolves once every piece of work started so far (and any started meanwhile) has settled. */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }
}
