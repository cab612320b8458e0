// The sync of a SQLite write-ahead log, done off the event loop and shared by every commit that waits for it.
import { close, closeSync, fdatasync, open } from 'node:fs';

/** The rounds in flight in this process, whatever their database (see `walSyncsSettled`). */
const inFlight = new Set<Promise<void>>();

/**
 * Resolves once no WAL sync of this process is in flight (at once when none is). Tests that step a manual clock await
 * it so that a store write started by a timer has resolved before time moves on; a write issued meanwhile starts a new
 * round, so they ask again until a turn of the event loop passes without one.
 */
export function walSyncsSettled(): Promise<void> | undefined {
  return inFlight.size > 0 ? Promise.allSettled([...inFlight]).then(() => undefined) : undefined;
}

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Closes a WalSync's descriptor when the WalSync is collected without having seen its database closed. */
const descriptors = new FinalizationRegistry<{ fd: number | undefined }>((held) => {
  if (held.fd === undefined) return;
  try {
    closeSync(held.fd);
  } catch {
    // Already closed with the process's other descriptors: nothing is left to release.
  }
});

/**
 * Group sync of one WAL file. `sync()` resolves once everything written to the file before the call is on disk: a
 * round of fdatasync runs in libuv's thread pool (so the event loop goes on serving while the disk syncs), and every
 * call made while a round is in flight joins the next round (it may have written after the running round began). A
 * failed sync rejects every caller of its round.
 *
 * The file is opened once and kept (SQLite keeps a WAL's inode while the database is open: it truncates or rewrites the
 * file, never replaces it) and closed after the first round that finds the database closed. A WAL that is gone was
 * removed by SQLite when the database's last connection closed, after checkpointing it into the database file (and
 * syncing that): nothing is left to sync.
 */
export class WalSync {
  readonly #path: string;
  readonly #isOpen: () => boolean;
  readonly #held: { fd: number | undefined } = { fd: undefined };
  #next: Waiter[] = [];
  #syncing = false;

  readonly #syncOnce: () => Promise<void>;

  /**
   * `path`: the `-wal` file of a SQLite database in WAL mode; `isOpen`: whether that database is still open; `syncOnce`
   * replaces one round's sync of the file (tests).
   */
  constructor(path: string, isOpen: () => boolean, syncOnce?: () => Promise<void>) {
    this.#path = path;
    this.#isOpen = isOpen;
    this.#syncOnce = syncOnce ?? (() => this.#syncFile());
    descriptors.register(this, this.#held);
  }

  /** Resolves once all that was written to the WAL before this call is durable; rejects when the sync fails. */
  sync(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#next.push({ resolve, reject });
      if (!this.#syncing) this.#round();
    });
  }

  #round(): void {
    const waiters = this.#next;
    this.#next = [];
    this.#syncing = true;
    const round = this.#syncOnce().then(
      () => this.#finish(waiters, undefined),
      (error: unknown) => this.#finish(waiters, error),
    );
    inFlight.add(round);
    void round.finally(() => inFlight.delete(round));
  }

  async #syncFile(): Promise<void> {
    let fd = this.#held.fd;
    if (fd === undefined) {
      const opened = await new Promise<number | undefined>((resolve, reject) =>
        open(this.#path, 'r+', (error, value) => {
          if (error?.code === 'ENOENT') resolve(undefined);
          else if (error) reject(error);
          else resolve(value);
        }),
      );
      if (opened === undefined) return;
      fd = this.#held.fd = opened;
    }
    const held = fd;
    await new Promise<void>((resolve, reject) => fdatasync(held, (error) => (error ? reject(error) : resolve())));
    if (!this.#isOpen()) {
      this.#held.fd = undefined;
      await new Promise<void>((resolve, reject) => close(held, (error) => (error ? reject(error) : resolve())));
    }
  }

  #finish(waiters: readonly Waiter[], error: unknown): void {
    this.#syncing = false;
    if (this.#next.length > 0) this.#round();
    for (const w of waiters) {
      if (error === undefined) w.resolve();
      else w.reject(error);
    }
  }
}
