// The sync of a SQLite write-ahead log, done off the event loop and shared by every commit that waits for it.
import { close, closeSync, fdatasync, fdatasyncSync, open, openSync } from 'node:fs';

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

/**
 * The moving average of a sync's duration (ms) above which syncs run off the event loop, and below which they run on it
 * again (two thresholds, so it does not flip at every sample).
 */
const OFF_LOOP_ABOVE_MS = 2;
const ON_LOOP_BELOW_MS = 1;

/** Weight of the latest sync in the moving average. */
const AVERAGE_WEIGHT = 0.2;

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
 * Group sync of one WAL file. After `sync()`, everything written to the file before the call is on disk once the
 * promise it returns resolves (or at once, when it returns nothing). While the disk syncs fast (a moving average under
 * 1 ms), the sync runs right there, on the event loop: a hop to the thread pool and back would cost more than it
 * frees. When syncs get slow (over 2 ms: a busy disk), each runs as a round of fdatasync in libuv's thread pool, so the
 * event loop goes on serving while the disk syncs, and every call made while a round is in flight joins the next
 * round (it may have written after the running round began). A failed sync throws, or rejects every caller of its
 * round.
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
  #averageMs = 0;
  #offLoop: boolean;
  readonly #replaced: boolean;

  readonly #syncOnce: () => Promise<void>;

  /**
   * `path`: the `-wal` file of a SQLite database in WAL mode; `isOpen`: whether that database is still open; `syncOnce`
   * replaces one round's sync of the file (tests).
   */
  constructor(path: string, isOpen: () => boolean, syncOnce?: () => Promise<void>) {
    this.#path = path;
    this.#isOpen = isOpen;
    this.#syncOnce = syncOnce ?? (() => this.#syncFile());
    // A replaced sync (tests) always runs as rounds.
    this.#replaced = syncOnce !== undefined;
    this.#offLoop = this.#replaced;
    descriptors.register(this, this.#held);
  }

  /**
   * Makes all that was written to the WAL before this call durable: at once (returns undefined; throws when the sync
   * fails), or by the time the returned promise resolves (rejects when the sync fails).
   */
  sync(): Promise<void> | undefined {
    if (!this.#offLoop && !this.#syncing) {
      const started = performance.now();
      this.#syncFileNow();
      this.#measured(performance.now() - started);
      return undefined;
    }
    return new Promise<void>((resolve, reject) => {
      this.#next.push({ resolve, reject });
      if (!this.#syncing) this.#round();
    });
  }

  #round(): void {
    const waiters = this.#next;
    this.#next = [];
    this.#syncing = true;
    const started = performance.now();
    const round = this.#syncOnce().then(
      () => {
        this.#measured(performance.now() - started);
        this.#finish(waiters, undefined);
      },
      (error: unknown) => this.#finish(waiters, error),
    );
    inFlight.add(round);
    void round.finally(() => inFlight.delete(round));
  }

  /** Folds one sync's duration into the average and picks where the next syncs run. */
  #measured(ms: number): void {
    this.#averageMs += AVERAGE_WEIGHT * (ms - this.#averageMs);
    if (this.#averageMs > OFF_LOOP_ABOVE_MS) this.#offLoop = true;
    else if (this.#averageMs < ON_LOOP_BELOW_MS && !this.#replaced) this.#offLoop = false;
  }

  /** The sync on the event loop (see the class). */
  #syncFileNow(): void {
    let fd = this.#held.fd;
    if (fd === undefined) {
      try {
        fd = this.#held.fd = openSync(this.#path, 'r+');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw error;
      }
    }
    fdatasyncSync(fd);
    if (!this.#isOpen()) {
      this.#held.fd = undefined;
      closeSync(fd);
    }
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
