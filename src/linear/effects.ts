// Exactly-once (or at-most-once) effects on Linear across crashes and redeliveries: each effect has a key naming the
// event or dispatch it belongs to and what it is ("stop:<activity>/response"). The key is claimed in the durable
// ledger before the effect is sent and marked done after. An effect whose key is done is never sent again. One
// claimed but not confirmed (the process died between sending and marking) is sent again only when it carries a
// client-generated id derived from its key, so that Linear refuses the second copy; otherwise it is left alone.
import { createHash } from 'node:crypto';
import type { Clock } from '../core/clock.ts';
import { errorMessage } from '../core/errors.ts';
import { faultPoint } from '../core/fault.ts';
import type { Logger } from '../core/logger.ts';
import type { LinearEffectStore } from '../store/linear-effects.ts';
import type { LinearErrorKind } from './api/types.ts';
import { LinearApiError } from './api/types.ts';

/** Failures that mean Linear did not apply the request. */
const NOT_APPLIED: readonly LinearErrorKind[] = ['user', 'auth', 'rate_limit'];

/**
 * How an effect is made safe to repeat. `keyed`: it is created with the client id `effectId(key)` (Linear's
 * create inputs take an `id`), so a second send of the same effect is refused by Linear: exactly once. `at-most-once`:
 * it has no such id (an issue update); when an earlier attempt claimed it without confirming, it is not sent again.
 */
export type EffectMode = 'keyed' | 'at-most-once';

/** What became of one `run`. */
export type EffectResult<T> =
  | { kind: 'sent'; value: T }
  /** `done`: confirmed earlier; `unconfirmed`: an earlier attempt may have sent it (at-most-once); `in-linear`: Linear already has it. */
  | { kind: 'skipped'; reason: 'done' | 'unconfirmed' | 'in-linear' };

/** The client id (UUID v4 format, as Linear's create inputs want it) of the effect with this key: stable forever. */
export function effectId(key: string): string {
  const h = createHash('sha256').update(`switchboard-effect:${key}`).digest('hex');
  const variant = ((Number.parseInt(h.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * The effects of one piece of work (a job, an event): `run(name, …)` runs the effect `<scope>/<name>`. `send` gets
 * the client id to create the entity with — undefined when there is no ledger (UNLEDGERED), then it sends as is.
 */
export interface EffectScope {
  run<T>(name: string, mode: EffectMode, send: (id: string | undefined) => Promise<T>): Promise<EffectResult<T>>;
}

/** A scope without a ledger: every run sends (callers outside webhook handling and jobs, and unit tests). */
export const UNLEDGERED: EffectScope = {
  async run<T>(
    _name: string,
    _mode: EffectMode,
    send: (id: string | undefined) => Promise<T>,
  ): Promise<EffectResult<T>> {
    return { kind: 'sent', value: await send(undefined) };
  },
};

/** The runner of effects on Linear over the durable ledger. */
export class LinearEffects {
  #store: LinearEffectStore;
  #clock: Clock;
  #logger: Logger;

  constructor(store: LinearEffectStore, clock: Clock, logger: Logger) {
    this.#store = store;
    this.#clock = clock;
    this.#logger = logger;
  }

  /**
   * Sends the effect `key` once: claims it, calls `send` with its client id, marks it done. A failed send leaves the
   * claim pending and rethrows (a retry sends it again under the same id). See EffectMode for a pending claim.
   */
  async run<T>(key: string, mode: EffectMode, send: (id: string) => Promise<T>): Promise<EffectResult<T>> {
    const claim = await this.#store.claim(key, this.#clock.now());
    if (claim === 'done') return { kind: 'skipped', reason: 'done' };
    if (claim === 'pending' && mode === 'at-most-once') {
      this.#logger.warn({ effect: key }, 'linear effect may have been sent before a restart; not sending it again');
      await this.#store.markDone(key, this.#clock.now());
      return { kind: 'skipped', reason: 'unconfirmed' };
    }
    let value: T;
    try {
      value = await send(effectId(key));
    } catch (error) {
      // A resend Linear refuses for good: the first send got there (the id is taken) — the effect exists once.
      if (claim === 'pending' && mode === 'keyed' && error instanceof LinearApiError && !error.retryable) {
        this.#logger.info({ effect: key, err: errorMessage(error) }, 'linear effect was already sent before a restart');
        await this.#store.markDone(key, this.#clock.now());
        return { kind: 'skipped', reason: 'in-linear' };
      }
      // Refused before anything was done (bad request, auth, rate limit): nothing reached Linear, a retry sends afresh.
      // A network or server failure may have been applied: the claim stays pending.
      if (claim === 'new' && error instanceof LinearApiError && NOT_APPLIED.includes(error.kind))
        await this.#store.release(key);
      throw error;
    }
    faultPoint('linear.effect.after-send');
    faultPoint(`linear.effect.after-send:${key.slice(key.lastIndexOf('/') + 1)}`);
    await this.#store.markDone(key, this.#clock.now());
    return { kind: 'sent', value };
  }

  /** The scope of effects keyed `<prefix>/<name>`. */
  scope(prefix: string): EffectScope {
    return { run: (name, mode, send) => this.run(`${prefix}/${name}`, mode, send) };
  }

  /** Deletes ledger entries last touched before `before`; resolves how many. */
  async prune(before: number): Promise<number> {
    return this.#store.prune(before);
  }
}
