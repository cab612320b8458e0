// The retention pass of `log_records` (store/log-records-retention.ts), run on one node: a member of the `primary`
// group, so only its holder deletes. It runs at start and every `intervalMs` (the SessionManager's cleanup interval,
// which is when session logs are evicted), one walk at a time: passes of bounded size, each starting after the last log
// the one before looked at, until the last session log.
import type { Kysely } from 'kysely';
import type { Clock, Timer } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import type { RecordPruneResult } from '../store/log-records-retention.ts';
import { pruneSessionRecords } from '../store/log-records-retention.ts';
import type { Database } from '../store/tables/index.ts';
import type { SingletonService } from './singletons.ts';

/** How a RecordRetention is built. */
export interface RecordRetentionOptions {
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  /** Time between passes (`timings.cleanupIntervalMs`). */
  intervalMs: number;
  /** A log is pruned only once its newest record is this old (`timings.cleanupMaxAgeMs`). */
  graceMs: number;
  /** Logs pruned per pass, rows per statement, and logs looked at per pass (default 100, 1000 and 1000). */
  maxLogs?: number;
  batchRows?: number;
  maxScan?: number;
}

/** Deletes the records of session logs whose session is gone; a SingletonService for the `primary` group. */
export class RecordRetention implements SingletonService {
  readonly #o: RecordRetentionOptions;
  #timer: Timer | null = null;
  #running: Promise<void> | null = null;
  #stopped = false;

  constructor(options: RecordRetentionOptions) {
    this.#o = options;
  }

  /** Runs a first pass in the background and then one every `intervalMs`. */
  async start(): Promise<void> {
    this.#stopped = false;
    this.#timer = this.#o.clock.every(this.#o.intervalMs, () => this.#kick());
    this.#kick();
  }

  /** Stops the timer and waits for the pass in progress. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#timer = null;
    await this.#running;
  }

  /** Waits for the pass in progress, if any (tests). */
  async idle(): Promise<void> {
    await this.#running;
  }

  /**
   * Walks every session log once, in passes of bounded size (each starting where the last stopped); resolves with the
   * total deleted (tests, and the timer).
   */
  async runOnce(): Promise<RecordPruneResult> {
    const { db, clock, graceMs } = this.#o;
    const maxLogs = this.#o.maxLogs ?? 100;
    const total: RecordPruneResult = { logs: 0, records: 0 };
    let after: string | null = null;
    for (;;) {
      const pass = await pruneSessionRecords(db, {
        before: clock.now() - graceMs,
        maxLogs,
        batchRows: this.#o.batchRows ?? 1000,
        ...(this.#o.maxScan ? { maxScan: this.#o.maxScan } : {}),
        after,
      });
      total.logs += pass.logs;
      total.records += pass.records;
      if (pass.next === null || this.#stopped) return total;
      after = pass.next;
    }
  }

  #kick(): void {
    if (this.#running || this.#stopped) return;
    this.#running = this.runOnce()
      .then((pruned) => {
        if (pruned.logs > 0) this.#o.logger.info(pruned, 'records of removed session logs deleted from log_records');
      })
      .catch((error: unknown) =>
        this.#o.logger.warn({ err: error }, 'could not prune log_records; the next pass tries again'),
      )
      .finally(() => {
        this.#running = null;
      });
  }
}
