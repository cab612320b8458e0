// The pool's housekeeping: long-finished sessions leave memory (their logs are released), and stored sessions beyond
// `maxPersistedSessions` are evicted (row and log): both now and then on a timer, the eviction also after every
// session's end.
import type { Clock, Timer } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import type { CodingSessionStore } from '../store/coding-sessions.ts';
import type { SessionLogs } from '../store/session-logs.ts';
import type { SessionPool } from './session-pool.ts';

/** What SessionCleanup uses. */
export interface SessionCleanupDeps {
  clock: Clock;
  config: Config;
  store: Pick<CodingSessionStore, 'evictionCandidates' | 'delete'>;
  logs: Pick<SessionLogs, 'release' | 'remove'>;
  pool: SessionPool;
}

/** Drops long-finished sessions from memory and evicts old stored ones; runs periodically once started. */
export class SessionCleanup {
  readonly #deps: SessionCleanupDeps;
  #timer: Timer | null = null;

  /** Takes the pool it trims and the store and logs it evicts from. */
  constructor(deps: SessionCleanupDeps) {
    this.#deps = deps;
  }

  /** Starts the periodic cleanup (every `timings.cleanupIntervalMs`); no-op when started already. */
  start(): void {
    this.#timer ??= this.#deps.clock.every(this.#deps.config.timings.cleanupIntervalMs, () => void this.run());
  }

  /** Stops the periodic cleanup (a cleanup under way goes on). */
  stop(): void {
    this.#timer?.cancel();
    this.#timer = null;
  }

  /** Drops long-finished sessions from memory and evicts stored sessions beyond maxPersistedSessions. */
  async run(): Promise<{ released: number; evicted: number }> {
    const released = await this.release();
    return { released, evicted: await this.evict() };
  }

  /**
   * Drops from memory the sessions finished more than `timings.cleanupMaxAgeMs` ago (their logs released); returns how
   * many. Looks at every session in memory, so it runs on the timer, not after each end (a session that just ended is
   * never that old).
   */
  async release(): Promise<number> {
    const { clock, config, logs, pool } = this.#deps;
    const now = clock.now();
    let released = 0;
    for (const [id, session] of pool.entries()) {
      const completedAt = session.record.completedAt;
      if (
        !session.isActive &&
        !session.attached &&
        completedAt !== null &&
        now - completedAt > config.timings.cleanupMaxAgeMs
      ) {
        pool.remove(id);
        await logs.release(id);
        released += 1;
      }
    }
    return released;
  }

  /** Evicts the stored sessions beyond the newest `maxPersistedSessions` (row, log, and from memory); returns how many. */
  async evict(): Promise<number> {
    const { config, store, logs, pool } = this.#deps;
    const evict = (await store.evictionCandidates(config.maxPersistedSessions)).filter(
      (id) => !pool.byId(id)?.attached,
    );
    for (const id of evict) {
      pool.remove(id);
      await store.delete(id);
      logs.remove(id);
    }
    return evict.length;
  }
}
