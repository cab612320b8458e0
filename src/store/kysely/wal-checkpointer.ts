// Checkpoints of a SQLite WAL run in a worker thread, so that copying the log into the database file and syncing it
// never block the event loop (SQLite would run them inside the commit that crosses its threshold).
import { Worker } from 'node:worker_threads';
import type { CheckpointRequest } from './wal-checkpoint-thread.ts';

/** Commits between two checkpoints asked of the thread. */
const COMMITS_PER_CHECKPOINT = 64;

/**
 * SQLite's own threshold (pages) on the daemon's connection while the thread checkpoints: only a safety net, reached when
 * the thread falls far behind (a checkpoint then runs in a commit, as without the thread).
 */
export const FALLBACK_AUTOCHECKPOINT_PAGES = 10_000;

/** SQLite's default threshold (pages), set back when the thread fails. */
export const DEFAULT_AUTOCHECKPOINT_PAGES = 1_000;

/**
 * The checkpointer of one database file in WAL mode. `committed()` after each commit; every
 * `COMMITS_PER_CHECKPOINT` commits a passive checkpoint runs in a worker thread with its own connection (started at the
 * first one, so a database that sees few commits never starts it). A passive checkpoint never waits for the daemon's
 * writers nor makes them wait; a request made while one runs is run after it. When the thread fails, `onFailure` is
 * called once (the caller lets SQLite checkpoint again) and no thread is started again. The thread never keeps the
 * process alive; it closes its connection at `close()`, or at the first request after the database was closed.
 */
export class WalCheckpointer {
  readonly #file: string;
  readonly #isOpen: () => boolean;
  readonly #onFailure: (error: unknown) => void;
  #worker: Worker | undefined;
  #commits = 0;
  #running = false;
  #again = false;
  #failed = false;

  /** `file`: the database file; `isOpen`: whether the daemon's connection is still open. */
  constructor(file: string, isOpen: () => boolean, onFailure: (error: unknown) => void) {
    this.#file = file;
    this.#isOpen = isOpen;
    this.#onFailure = onFailure;
  }

  /** Counts one commit; asks for a checkpoint every `COMMITS_PER_CHECKPOINT`. */
  committed(): void {
    this.#commits += 1;
    if (this.#commits < COMMITS_PER_CHECKPOINT) return;
    this.#commits = 0;
    this.#request();
  }

  /** Ends the thread (its connection closed); later commits start no other. */
  close(): void {
    this.#failed = true;
    this.#send('close');
    this.#worker = undefined;
  }

  #request(): void {
    if (this.#failed) return;
    if (!this.#isOpen()) {
      this.close();
      return;
    }
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = true;
    this.#send('checkpoint');
  }

  #send(request: CheckpointRequest): void {
    if (request === 'close') {
      this.#worker?.postMessage(request);
      return;
    }
    this.#worker ??= this.#start();
    this.#worker.postMessage(request);
  }

  #start(): Worker {
    const worker = new Worker(new URL('./wal-checkpoint-thread.ts', import.meta.url), {
      workerData: { file: this.#file },
    });
    worker.on('message', () => {
      this.#running = false;
      if (this.#again) {
        this.#again = false;
        this.#request();
      }
    });
    worker.on('error', (error) => this.#fail(error));
    worker.on('exit', (code) => {
      if (this.#worker === worker && code !== 0) this.#fail(new Error(`checkpoint thread exited with ${code}`));
    });
    // After the listeners: adding a 'message' listener refs the worker again.
    worker.unref();
    return worker;
  }

  #fail(error: unknown): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#worker = undefined;
    this.#onFailure(error);
  }
}
