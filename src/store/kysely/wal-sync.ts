// Durability of SQLite's commits without holding the event loop. The connection runs in WAL mode with
// synchronous=NORMAL: a COMMIT writes its frames to the WAL (so it survives a crash of the process) but does not sync
// it. What makes it survive a power cut is the sync SQLite would do itself with synchronous=FULL — one fdatasync of the
// WAL after the commit — done here on libuv's thread pool instead, while the loop goes on. Whoever acknowledges a
// commit waits for `durable()` first. Syncs coalesce: callers that arrive while one is under way share the next one
// (started as soon as it ends, so it covers every commit made meanwhile), so a burst of commits costs a few syncs.
import { close, fdatasync, open } from 'node:fs';
import type { DatabaseSync } from 'node:sqlite';

/** How one WAL file is synced: opened once (read-only: syncing needs no write access), then synced on the thread pool. */
export interface WalFile {
  open: (path: string) => Promise<number>;
  sync: (fd: number) => Promise<void>;
  close: (fd: number) => Promise<void>;
}

/** The real file system, through libuv's thread pool. */
export const NODE_WAL_FILE: WalFile = {
  open: (path) => new Promise((resolve, reject) => open(path, 'r', (e, fd) => (e ? reject(e) : resolve(fd)))),
  sync: (fd) => new Promise((resolve, reject) => fdatasync(fd, (e) => (e ? reject(e) : resolve()))),
  close: (fd) => new Promise((resolve, reject) => close(fd, (e) => (e ? reject(e) : resolve()))),
};

/**
 * The WAL syncer of one SQLite connection. `durable()` resolves once every commit made before the call is on disk
 * (rejects if the sync failed: the commit may then be lost at a power cut). For a database that does not sync this
 * way — in memory, or not in WAL mode (SQLite then keeps synchronous=FULL and syncs each commit itself) — it resolves
 * at once.
 */
export class WalSync {
  readonly #path: string | null;
  readonly #file: WalFile;
  #fd: Promise<number> | null = null;
  /** The sync under way, and the one that waits for it (taking every caller that arrived meanwhile). */
  #running: Promise<void> | null = null;
  #next: Promise<void> | null = null;
  #closed = false;

  /** `walPath`: the `-wal` file to sync, or null when commits are synced by SQLite itself (or not at all). */
  constructor(walPath: string | null, file: WalFile = NODE_WAL_FILE) {
    this.#path = walPath;
    this.#file = file;
  }

  /** Resolves once every commit made before this call is synced to disk; see the class comment. */
  durable(): Promise<void> {
    if (this.#path === null || this.#closed) return Promise.resolve();
    if (!this.#running) return this.#start();
    this.#next ??= this.#running.then(
      () => this.#startNext(),
      () => this.#startNext(),
    );
    return this.#next;
  }

  /**
   * Closes the WAL file once the sync under way (if any) has ended. Call it after the connection is closed: SQLite's
   * last connection checkpoints the WAL into the database file and syncs it as it closes, so later callers of
   * `durable()` resolve at once.
   */
  async close(): Promise<void> {
    this.#closed = true;
    const fd = this.#fd;
    this.#fd = null;
    await Promise.allSettled([this.#running, this.#next]);
    if (fd) await this.#file.close(await fd).catch(() => undefined);
  }

  #startNext(): Promise<void> {
    this.#next = null;
    return this.#start();
  }

  #start(): Promise<void> {
    const path = this.#path;
    if (path === null || this.#closed) return Promise.resolve();
    let fd = this.#fd;
    if (!fd) {
      const opening = this.#file.open(path);
      // A failed open is tried again by the next sync (its callers are told of this failure).
      opening.catch(() => {
        if (this.#fd === opening) this.#fd = null;
      });
      this.#fd = fd = opening;
    }
    const running = fd.then((n) => this.#file.sync(n));
    this.#running = running;
    void running.then(
      () => this.#settle(running),
      () => this.#settle(running),
    );
    return running;
  }

  #settle(running: Promise<void>): void {
    if (this.#running === running) this.#running = null;
  }
}

/**
 * The syncer for `db`: one that syncs its WAL when it is a file in WAL mode (openDatabase then runs it with
 * synchronous=NORMAL), else one that resolves at once (SQLite syncs each commit itself, or there is nothing to sync).
 */
export function walSyncFor(db: DatabaseSync, file: WalFile = NODE_WAL_FILE): WalSync {
  const mode = (db.prepare('PRAGMA journal_mode').get() as { journal_mode?: string } | undefined)?.journal_mode;
  const main = (db.prepare('PRAGMA database_list').all() as { name: string; file: string }[]).find(
    (d) => d.name === 'main',
  );
  return new WalSync(mode === 'wal' && main?.file ? `${main.file}-wal` : null, file);
}
