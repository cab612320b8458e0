// A stand-in for the file system calls that sync SQLite's WAL (src/store/kysely/wal-sync.ts): each sync waits until
// the test lets it finish, so a test can see what waits for the disk and what does not.
import type { WalFile } from '../../src/store/kysely/wal-sync.ts';

/** A WalFile whose syncs are held until `release` (or failed by `fail`); counts opens, syncs and closes. */
export class WalGate {
  opened: string[] = [];
  syncs = 0;
  closed = 0;
  #held: { resolve: () => void; reject: (error: Error) => void }[] = [];
  #waiters: (() => void)[] = [];

  readonly file: WalFile = {
    open: async (path) => {
      this.opened.push(path);
      return 42;
    },
    sync: () =>
      new Promise<void>((resolve, reject) => {
        this.syncs += 1;
        this.#held.push({ resolve, reject });
        for (const wake of this.#waiters.splice(0)) wake();
      }),
    close: async () => {
      this.closed += 1;
    },
  };

  /** How many syncs are held now. */
  get held(): number {
    return this.#held.length;
  }

  /** Resolves once a sync is held (at once if one is). */
  async syncing(): Promise<void> {
    while (this.#held.length === 0) await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  /** Lets every held sync succeed. */
  release(): void {
    for (const h of this.#held.splice(0)) h.resolve();
  }

  /** Fails every held sync with `error`. */
  fail(error: Error): void {
    for (const h of this.#held.splice(0)) h.reject(error);
  }
}
