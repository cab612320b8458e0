// Work of one key run one piece at a time, in the order it was asked for; work of different keys runs side by side.
// A key's queue is forgotten once its last piece has settled, so the keys seen over time are not kept.

/** One in-order queue of asynchronous work per key. */
export class KeyedSerial<K> {
  /** The last piece of work asked for per key (settled, never rejecting), so that the next one waits for it. */
  readonly #last = new Map<K, Promise<void>>();

  /**
   * Runs `work` once every piece of work of `key` asked for before it has settled (fulfilled or not); resolves or
   * rejects as `work` does.
   */
  run<T>(key: K, work: () => Promise<T>): Promise<T> {
    const last = this.#last;
    const mine = (last.get(key) ?? Promise.resolve()).then(work);
    const settled = mine.then(
      () => undefined,
      () => undefined,
    );
    last.set(key, settled);
    void settled.then(() => {
      if (last.get(key) === settled) last.delete(key);
    });
    return mine;
  }

  /** Resolves once no key has work queued or running (work asked for meanwhile is waited for too). */
  async idle(): Promise<void> {
    while (this.#last.size > 0) await Promise.all(this.#last.values());
  }
}
