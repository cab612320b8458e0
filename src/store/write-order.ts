// Writes of one key (a session's row, a run) committed in the order they were asked for. Over PostgreSQL's pool two
// writes of one row could otherwise commit out of order (a `running` landing after its `completed`, a turn's cost after
// a later one's); SQLite's one connection already runs them in order (and a chain there could wait on the transaction
// it is in), so there each write simply runs.

/** One in-order queue of writes per key, on a shared store (PostgreSQL); a pass-through on SQLite. */
export class WriteOrder<K> {
  /** The last write asked for per key, so the next one waits for it. */
  readonly #queue = new Map<K, Promise<void>>();
  readonly #shared: boolean;

  /** `shared`: the store is PostgreSQL (see isShared), whose pool may commit two writes of one key out of order. */
  constructor(shared: boolean) {
    this.#shared = shared;
  }

  /**
   * Runs `write` after every write of `key` asked for before it has settled (fulfilled or not); resolves or rejects
   * as `write` does.
   */
  async run(key: K, write: () => Promise<void>): Promise<void> {
    await (this.#shared ? this.#inOrder(key, write) : write());
  }

  async #inOrder(key: K, write: () => Promise<void>): Promise<void> {
    const queue = this.#queue;
    const previous = queue.get(key) ?? Promise.resolve();
    const mine = previous.then(write, write);
    const settled = mine.then(
      () => undefined,
      () => undefined,
    );
    queue.set(key, settled);
    void settled.then(() => {
      if (queue.get(key) === settled) queue.delete(key);
    });
    await mine;
  }
}
