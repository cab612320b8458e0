// Writes of one key (a session's row, a run) committed in the order they were asked for. Over PostgreSQL's pool two
// writes of one row could otherwise commit out of order (a `running` landing after its `completed`, a turn's cost after
// a later one's); SQLite's one connection already runs them in order (and a chain there could wait on the transaction
// it is in), so there each write simply runs.
import { KeyedSerial } from '../core/keyed-serial.ts';

/** One in-order queue of writes per key, on a shared store (PostgreSQL); a pass-through on SQLite. */
export class WriteOrder<K> {
  readonly #queue = new KeyedSerial<K>();
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
    await (this.#shared ? this.#queue.run(key, write) : write());
  }
}
