// Drains the durable queue of GitHub webhook deliveries: at least once, attempts counted, retried with backoff, dead
// after `MAX_ATTEMPTS`, resumed after a restart. The handler acts on the event (the review loop and mentions of
// `github/rework.ts`), or by default only records and logs it.
import { backoffDelay } from '../../core/backoff.ts';
import type { Clock, Timer } from '../../core/clock.ts';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { StepResult } from '../../core/work-loop.ts';
import { WorkLoop } from '../../core/work-loop.ts';
import type { GithubDeliveryStore, StoredGithubDelivery } from '../../store/github-deliveries.ts';
import type { GithubEvent } from './events.ts';
import { describeGithubEvent, parseGithubEvent } from './events.ts';

/** Attempts before a delivery is dead-lettered. */
export const MAX_ATTEMPTS = 5;

/**
 * How long finished deliveries are kept (their ids deduplicate redeliveries; GitHub redelivers within days, and by hand
 * at most three days back), and how often they are pruned.
 */
export const KEEP_MS = 14 * 24 * 3_600_000;
const PRUNE_EVERY_MS = 24 * 3_600_000;

/** What is done with a parsed event; resolves what became of it (the delivery's recorded outcome). */
export type GithubEventHandler = (event: GithubEvent, delivery: StoredGithubDelivery) => Promise<string>;

/** What the worker needs. */
export interface GithubWebhookWorkerOptions {
  store: GithubDeliveryStore;
  clock: Clock;
  logger: Logger;
  /** Defaults to recording and logging the event (`recordOnly`). */
  handler?: GithubEventHandler;
}

/** The default handler (no sessions to act with): logs the event and records it as the delivery's outcome. */
export function recordOnly(logger: Logger): GithubEventHandler {
  return (event, delivery) => {
    const outcome = describeGithubEvent(event);
    if (event.kind !== 'other') logger.info({ delivery: delivery.deliveryId, event: event.kind }, `github: ${outcome}`);
    return Promise.resolve(outcome);
  };
}

/** The queue consumer: `start` once, `notify` when a delivery was queued, `stop` on shutdown. */
export class GithubWebhookWorker {
  readonly #o: GithubWebhookWorkerOptions;
  readonly #handler: GithubEventHandler;
  readonly #loop: WorkLoop;
  #running = false;
  #pruneTimer: Timer | undefined;

  constructor(options: GithubWebhookWorkerOptions) {
    this.#o = options;
    this.#handler = options.handler ?? recordOnly(options.logger);
    this.#loop = new WorkLoop({
      clock: options.clock,
      step: () => this.#step(),
      retryDelay: (failures) => backoffDelay(failures, 1000, 60_000),
      onError: (error, failures, retryInMs) =>
        options.logger.error(
          { err: errorMessage(error), failures, retryInMs },
          'github webhooks: cannot read the queue',
        ),
    });
  }

  /** Puts deliveries a crash left `processing` back in the queue, then starts draining. */
  async start(): Promise<void> {
    const recovered = await this.#o.store.recoverInterrupted(this.#o.clock.now());
    if (recovered > 0) this.#o.logger.warn({ recovered }, 'github webhooks: resuming deliveries cut off by a restart');
    this.#running = true;
    await this.#prune();
    this.#pruneTimer = this.#o.clock.every(PRUNE_EVERY_MS, () => void this.#prune());
    this.#loop.kick();
  }

  /** Wakes the worker (a delivery was queued); nothing before `start` (start drains what is queued). */
  notify(): void {
    if (this.#running) this.#loop.kick();
  }

  /** Resolves once the drain in flight (if any) ended. */
  idle(): Promise<void> {
    return this.#loop.idle();
  }

  /** Stops after the delivery in hand. */
  stop(): Promise<void> {
    this.#running = false;
    this.#pruneTimer?.cancel();
    return this.#loop.stop();
  }

  async #prune(): Promise<void> {
    const { store, clock, logger } = this.#o;
    try {
      const pruned = await store.prune(clock.now() - KEEP_MS);
      if (pruned > 0) logger.debug({ pruned }, 'github webhooks: old deliveries pruned');
    } catch (error) {
      logger.warn({ err: errorMessage(error) }, 'github webhooks: could not prune old deliveries');
    }
  }

  async #step(): Promise<StepResult> {
    const { store, clock, logger } = this.#o;
    const delivery = await store.claimNext(clock.now());
    if (!delivery) {
      const due = await store.nextDueAfter(clock.now());
      return due === undefined ? 'quiet' : { wakeInMs: Math.max(1, due - clock.now()) };
    }
    try {
      const event = parseGithubEvent(delivery.event, JSON.parse(delivery.payload));
      const outcome = await this.#handler(event, delivery);
      await store.complete(delivery.deliveryId, outcome, clock.now());
    } catch (error) {
      const dead = delivery.attempts >= MAX_ATTEMPTS;
      const retryAt = dead ? null : clock.now() + backoffDelay(delivery.attempts, 1000, 60_000);
      logger.warn(
        { delivery: delivery.deliveryId, event: delivery.event, attempts: delivery.attempts, err: errorMessage(error) },
        dead ? 'github webhook dead-lettered' : 'github webhook failed; will retry',
      );
      await store.fail(delivery.deliveryId, errorMessage(error), clock.now(), retryAt);
    }
    return 'more';
  }
}
