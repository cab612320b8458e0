// The Linear delivery store its callers use: one facade over the parts that each hold one job (the intake's inserts
// and dedup reads, the worker's queue: claim, settle, retry times, recovery; the upkeep: lookups, counts, dead
// letters, pruning), built over one database. The types are in linear-delivery-types.ts, the row mapping in
// linear-delivery-rows.ts.
import type { Kysely } from 'kysely';
import { DeliveryIntake } from './linear-delivery-intake.ts';
import { DeliveryMaintenance } from './linear-delivery-maintenance.ts';
import { DeliveryQueue } from './linear-delivery-queue.ts';
import type { DeliveryOutcome, DeliveryStatus, NewDelivery, StoredDelivery } from './linear-delivery-types.ts';
import type { Database } from './tables/index.ts';

/**
 * The durable record of Linear webhook deliveries: the dedup set (a delivery id is stored once, ever, until pruned) and
 * the work queue of the webhook worker. Every method is one transaction, resolved after its commit.
 */
export class LinearDeliveryStore {
  readonly #intake: DeliveryIntake;
  readonly #queue: DeliveryQueue;
  readonly #maintenance: DeliveryMaintenance;

  /** The store over `db`. */
  constructor(db: Kysely<Database>) {
    this.#intake = new DeliveryIntake(db);
    this.#queue = new DeliveryQueue(db);
    this.#maintenance = new DeliveryMaintenance(db);
  }

  /** Stores a new delivery as pending, due now. Resolves false (and changes nothing) when its id or digest is known. */
  enqueue(delivery: NewDelivery): Promise<boolean> {
    return this.#intake.enqueue(delivery);
  }

  /**
   * Stores several deliveries in ONE commit and resolves after it, per delivery, whether it was new; a repeated id or
   * body digest (even within the group) is stored once (see DeliveryIntake.enqueueMany).
   */
  enqueueMany(deliveries: readonly NewDelivery[]): Promise<boolean[]> {
    return this.#intake.enqueueMany(deliveries);
  }

  /** Puts deliveries left `processing` by a previous process back to pending (at-least-once). Resolves how many. */
  recoverInterrupted(now: number): Promise<number> {
    return this.#queue.recoverInterrupted(now);
  }

  /**
   * Claims the oldest pending delivery that is due and not behind an unfinished earlier delivery of the same order key:
   * marks it processing and counts the attempt. Undefined when nothing can run now.
   */
  claimNext(now: number): Promise<StoredDelivery | undefined> {
    return this.#queue.claimNext(now);
  }

  /** Marks a claimed delivery finished, with what became of it (handled, or why it was ignored). */
  complete(seq: number, outcome: string, now: number): Promise<void> {
    return this.#queue.complete(seq, outcome, now);
  }

  /** Records a failed attempt: back to pending until `retryAt`, or dead when `retryAt` is null. */
  fail(seq: number, error: string, now: number, retryAt: number | null): Promise<void> {
    return this.#queue.fail(seq, error, now, retryAt);
  }

  /**
   * Records the outcomes of finished attempts, then claims up to `limit` runnable deliveries, all in ONE transaction of
   * relaxed durability (see DeliveryQueue.settleAndClaim). Resolves the claimed deliveries, marked processing.
   */
  settleAndClaim(outcomes: readonly DeliveryOutcome[], now: number, limit: number): Promise<StoredDelivery[]> {
    return this.#queue.settleAndClaim(outcomes, now, limit);
  }

  /** Whether `claimNext(now)` would find something. */
  hasRunnable(now: number): Promise<boolean> {
    return this.#queue.hasRunnable(now);
  }

  /** The earliest retry time after `now` among pending deliveries; undefined when none waits for a later time. */
  nextDueAfter(now: number): Promise<number | undefined> {
    return this.#queue.nextDueAfter(now);
  }

  /** One delivery by id. */
  get(deliveryId: string): Promise<StoredDelivery | undefined> {
    return this.#maintenance.get(deliveryId);
  }

  /** Number of deliveries in each state. */
  counts(): Promise<Record<DeliveryStatus, number>> {
    return this.#maintenance.counts();
  }

  /** Dead-lettered deliveries, newest first (50 unless `limit` is given). */
  deadLetters(limit?: number): Promise<StoredDelivery[]> {
    return this.#maintenance.deadLetters(limit);
  }

  /** Puts a dead delivery back in the queue with a fresh attempt count; false when it is not dead. */
  retryDead(deliveryId: string, now: number): Promise<boolean> {
    return this.#maintenance.retryDead(deliveryId, now);
  }

  /** Deletes finished (done or dead) deliveries last touched before `before`; resolves how many. */
  prune(before: number): Promise<number> {
    return this.#maintenance.prune(before);
  }
}
