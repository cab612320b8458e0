import type { Clock } from '../../core/clock.ts';
import { LinearApiError } from './types.ts';

const HOUR_MS = 3_600_000;

/** Resolves after `ms` on `clock` (a ManualClock resolves it when advanced). */
export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => {
    clock.after(ms, resolve);
  });
}

export interface RequestBudgetOptions {
  /** Requests allowed in any sliding hour. */
  perHour: number;
  /** A caller waits at most this long for a slot; beyond it `acquire` fails as `rate_limit`. */
  maxWaitMs: number;
}

/**
 * The request budget of one Linear workspace: at most `perHour` requests in any sliding hour, and nothing at all
 * before a rate-limit reset Linear announced. One instance per workspace, shared by every client of that workspace.
 */
export class RequestBudget {
  #clock: Clock;
  #options: RequestBudgetOptions;
  /** Start times of the requests in the current window, oldest first. */
  #sent: number[] = [];
  #blockedUntil = 0;

  constructor(clock: Clock, options: RequestBudgetOptions) {
    this.#clock = clock;
    this.#options = options;
  }

  /** Requests still allowed in the current sliding hour. */
  get remaining(): number {
    this.#trim(this.#clock.now());
    return Math.max(0, this.#options.perHour - this.#sent.length);
  }

  /** Epoch ms until which no request is sent (a rate-limit reset), 0 when not blocked. */
  get blockedUntil(): number {
    return this.#blockedUntil > this.#clock.now() ? this.#blockedUntil : 0;
  }

  /** Holds every request until `until` (epoch ms); a later block wins over an earlier one. */
  blockUntil(until: number): void {
    if (until > this.#blockedUntil) this.#blockedUntil = until;
  }

  /**
   * Takes one request slot, waiting on the clock for a free slot or the end of a block. Throws LinearApiError
   * ('rate_limit') at once when the wait would exceed `maxWaitMs`, without taking a slot.
   */
  async acquire(): Promise<void> {
    for (;;) {
      const now = this.#clock.now();
      this.#trim(now);
      let wait = 0;
      if (this.#blockedUntil > now) wait = this.#blockedUntil - now;
      else if (this.#sent.length >= this.#options.perHour) wait = (this.#sent[0] as number) + HOUR_MS - now;
      if (wait <= 0) {
        this.#sent.push(now);
        return;
      }
      if (wait > this.#options.maxWaitMs) {
        const why =
          this.#blockedUntil > now
            ? 'Linear rate limit reached'
            : `request budget of ${this.#options.perHour} requests per hour used up (linear.requests.budgetPerHour)`;
        throw new LinearApiError('rate_limit', `${why}; next request possible in ${Math.ceil(wait / 1000)} s`);
      }
      await sleep(this.#clock, wait);
    }
  }

  #trim(now: number): void {
    const cutoff = now - HOUR_MS;
    let drop = 0;
    while (drop < this.#sent.length && (this.#sent[drop] as number) <= cutoff) drop += 1;
    if (drop > 0) this.#sent.splice(0, drop);
  }
}
