// Idempotency keys of requests from outside (POST /hooks/wake, RPC methods that allow them): the first request under a
// key runs and its answer is stored; a repeat of the same request gets that answer again; a different request under the
// same key is refused. Keys are claimed durably before the request runs, so a repeat after a crash never runs it twice:
// an effect either commits its answer in its own transaction (KeyCommit) or is keyed downstream (a wake's message id).
import { createHash } from 'node:crypto';
import type { Transaction } from 'kysely';
import { z } from 'zod';
import type { Clock } from '../core/clock.ts';
import { AppError } from '../core/errors.ts';
import { faultPoint } from '../core/fault.ts';
import type { IdempotencyKeyStore } from '../store/idempotency-keys.ts';
import type { Database } from '../store/tables/index.ts';

/** How long a key is remembered after its first request (like Stripe: 24 hours); a later repeat runs anew. */
export const IDEMPOTENCY_KEY_RETENTION_MS = 24 * 3_600_000;

/** A key as a client may send it: 1–255 visible ASCII characters (a UUID is a good choice). */
export const idempotencyKeySchema = z
  .string()
  .min(1, 'must not be empty')
  .max(255, 'at most 255 characters')
  .regex(/^[\x21-\x7e]+$/, 'visible ASCII characters only (a UUID is a good choice)');

/** Why a keyed request was refused: the key was used for another request, or its first request still runs. */
export type KeyRefusal = 'mismatch' | 'in-progress';

/** A refused keyed request (a conflict): `reason` tells the two cases apart (HTTP 422 and 409). */
export class IdempotencyError extends AppError {
  readonly reason: KeyRefusal;

  constructor(reason: KeyRefusal, key: string) {
    super(
      'conflict',
      reason === 'mismatch'
        ? `idempotency key "${key}" was already used for a different request; send a new key for a new request`
        : `a request with idempotency key "${key}" is still being processed; repeat it once it has answered`,
      'idempotencyKey',
    );
    this.reason = reason;
  }
}

/** A request under a key. `scope` names the caller and method (`hooks:wake`, `rpc:sessions.launch`). */
export interface KeyedRequest {
  scope: string;
  key: string;
  /** The request's parameters, after defaults: a repeat must have the same ones. */
  body: unknown;
}

/** Lets an effect record its answer inside its own transaction, so the effect and the answer commit together. */
export interface KeyCommit {
  /** Records the answer in `trx` (a transaction from `Idempotency.atomically`); resolves once it is written there. */
  commitIn(trx: Transaction<Database>, response: unknown): Promise<void>;
}

/** What an effect ended with: an answer to keep for repeats, or an answer after which nothing happened (key freed). */
export type KeyedOutcome = { kind: 'answer'; response: unknown } | { kind: 'no-effect'; response: unknown };

/** The answer to a keyed request, and whether it is the stored answer of an earlier one. */
export interface KeyedAnswer {
  response: unknown;
  replayed: boolean;
}

/** The canonical JSON of a value (object keys sorted), so that equal requests hash the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** A short stable digest of a key in its scope (for ids derived from it, e.g. a wake's message id). */
export function keyDigest(scope: string, key: string): string {
  return createHash('sha256').update(`${scope}\n${key}`).digest('hex').slice(0, 32);
}

/** Runs keyed requests over the durable key store. */
export class Idempotency {
  #store: IdempotencyKeyStore;
  #clock: Clock;

  constructor(store: IdempotencyKeyStore, clock: Clock) {
    this.#store = store;
    this.#clock = clock;
  }

  /**
   * Runs `effect` once per (scope, key): a repeat with the same body answers the stored first answer; throws an
   * IdempotencyError for another body under the key, or while the first request still runs. When `effect` throws or
   * ends with `no-effect`, the key is freed (unless the effect had already committed an answer).
   */
  async run(request: KeyedRequest, effect: (commit: KeyCommit) => Promise<KeyedOutcome>): Promise<KeyedAnswer> {
    const { scope, key } = request;
    const now = this.#clock.now();
    await this.#store.prune(now - IDEMPOTENCY_KEY_RETENTION_MS);
    const hash = createHash('sha256').update(canonicalJson(request.body)).digest('hex');
    const claim = await this.#store.claim(scope, key, hash, now);
    switch (claim.kind) {
      case 'mismatch':
      case 'in-progress':
        throw new IdempotencyError(claim.kind, key);
      case 'replay':
        return { response: JSON.parse(claim.response) as unknown, replayed: true };
      case 'new':
      case 'taken-over':
        break;
      default: {
        const never: never = claim;
        throw new Error(`unknown idempotency claim ${JSON.stringify(never)}`);
      }
    }
    let committed = false;
    const commit: KeyCommit = {
      commitIn: async (trx, response) => {
        await this.#store.complete(scope, key, JSON.stringify(response), this.#clock.now(), trx);
        committed = true;
      },
    };
    let outcome: KeyedOutcome;
    try {
      outcome = await effect(commit);
    } catch (error) {
      if (!committed) await this.#store.release(scope, key);
      throw error;
    }
    if (outcome.kind === 'no-effect') {
      if (!committed) await this.#store.release(scope, key);
      return { response: outcome.response, replayed: false };
    }
    faultPoint('idempotency.before-complete');
    await this.#store.complete(scope, key, JSON.stringify(outcome.response), this.#clock.now());
    return { response: outcome.response, replayed: false };
  }

  /**
   * Runs `fn` in one database transaction and resolves to its result once it committed: an effect written through
   * `trx` and its `commitIn(trx, …)` commit together or not at all.
   */
  async atomically<T>(fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    return this.#store.atomically(fn);
  }
}
