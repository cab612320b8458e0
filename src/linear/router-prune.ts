// The router's housekeeping: claims, jobs and effect-ledger entries older than `linear.router.retentionSec` are
// removed at start and every `pruneIntervalSec` (a redelivery that old is past Linear's retries).
import type { Clock, Timer } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import { errorMessage } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { LinearClaimStore } from '../store/linear-claims.ts';
import type { LinearJobStore } from '../store/linear-jobs.ts';
import type { LinearEffects } from './effects.ts';

/** What the pruner removes from, and its clock and settings. */
export interface RouterPruneDeps {
  config: Pick<Config, 'linear'>;
  claims: Pick<LinearClaimStore, 'prune'>;
  jobStore: Pick<LinearJobStore, 'prune'>;
  effects: Pick<LinearEffects, 'prune'>;
  clock: Clock;
  logger: Logger;
}

/** Prunes old claims, jobs and effects on a timer; `start()` prunes once and arms it, `stop()` cancels it. */
export class RouterPrune {
  readonly #d: RouterPruneDeps;
  #timer: Timer | undefined;

  constructor(deps: RouterPruneDeps) {
    this.#d = deps;
  }

  /** Prunes once now, then every `pruneIntervalSec` (arming the timer once however often it is called). */
  async start(): Promise<void> {
    await this.prune();
    this.#timer ??= this.#d.clock.every(this.#d.config.linear.router.pruneIntervalSec * 1000, () => void this.prune());
  }

  /** Cancels the timer (a prune in flight runs to its end). */
  stop(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  /** Removes what is older than `retentionSec`; logs how much, and logs a failure (never throws). */
  async prune(): Promise<void> {
    const { claims, jobStore, effects, clock, logger, config } = this.#d;
    try {
      const before = clock.now() - config.linear.router.retentionSec * 1000;
      const removed = (await claims.prune(before)) + (await jobStore.prune(before)) + (await effects.prune(before));
      if (removed > 0) logger.info({ removed }, 'linear router: pruned old claims and jobs');
    } catch (error) {
      logger.error({ err: errorMessage(error) }, 'linear router: prune failed');
    }
  }
}
