// Group lookups: the small reads asked for in one turn of the event loop answered by one query, like a group commit.

interface Waiting<K> {
  key: K;
  resolve(found: boolean): void;
  reject(error: unknown): void;
}

/**
 * Answers "is this key there?" for keys asked one at a time, with one query per group: the keys asked for in one turn
 * of the event loop (e.g. by every writer an fsync completion resumed) are looked up together once that turn's I/O
 * callbacks ran (setImmediate), and those asked for while a query runs go in the next one (at most `maxGroup` per
 * query). A lone caller waits for its own query and the rest of the turn; a busy caller pays a query per group, not
 * per key.
 */
export class GroupedLookup<K> {
  readonly #query: (keys: readonly K[]) => Promise<(key: K) => boolean>;
  readonly #maxGroup: number;
  #waiting: Waiting<K>[] = [];
  #running = false;

  /**
   * `query` reads a group of keys and returns the test of whether a key of that group is there; `maxGroup` bounds a
   * group (a statement's parameter count).
   */
  constructor(query: (keys: readonly K[]) => Promise<(key: K) => boolean>, maxGroup: number) {
    this.#query = query;
    this.#maxGroup = maxGroup;
  }

  /** Resolves whether `key` is there; rejects with the error of its group's query. */
  has(key: K): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.#waiting.push({ key, resolve, reject });
      if (this.#running) return;
      this.#running = true;
      setImmediate(() => void this.#drain());
    });
  }

  async #drain(): Promise<void> {
    try {
      while (this.#waiting.length > 0) {
        const group = this.#waiting.splice(0, this.#maxGroup);
        try {
          const found = await this.#query(group.map((w) => w.key));
          for (const w of group) w.resolve(found(w.key));
        } catch (error) {
          for (const w of group) w.reject(error);
        }
      }
    } finally {
      this.#running = false;
    }
  }
}
