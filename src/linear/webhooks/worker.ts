// Drains the durable delivery queue into the LinearEventHandler: at least once, attempts counted, exponential retry,
// dead letter after `maxAttempts`, deliveries of one agent session / issue one at a time, resumed after a restart.
import type { Clock, Timer } from '../../core/clock.ts';
import type { LinearConfig } from '../../core/config-linear.ts';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { LinearDeliveryStore, StoredDelivery } from '../../store/linear-deliveries.ts';
import type { LinearEventHandler } from './events.ts';
import { InvalidPayloadError, parseLinearEvent } from './parse.ts';

export interface WebhookWorkerOptions {
  store: LinearDeliveryStore;
  handler: LinearEventHandler;
  /** The app user's id (e.g. LinearApi.viewer().id, cached); needed for Comment and Issue payloads. */
  appUserId: () => Promise<string>;
  clock: Clock;
  logger: Logger;
  webhooks: LinearConfig['webhooks'];
}

/** The queue consumer. `start` once; `notify` whenever a delivery was queued; `stop` on shutdown. */
export class WebhookWorker {
  #o: WebhookWorkerOptions;
  #running = false;
  #inFlight = new Set<Promise<void>>();
  #retryTimer: Timer | undefined;
  #retryAt = Infinity;
  #pruneTimer: Timer | undefined;
  #idleWaiters: (() => void)[] = [];

  constructor(options: WebhookWorkerOptions) {
    this.#o = options;
  }

  /** Puts deliveries interrupted by a previous process back in the queue, prunes old ones, and starts working. */
  start(): void {
    if (this.#running) return;
    const { store, clock, logger, webhooks } = this.#o;
    this.#running = true;
    const recovered = store.recoverInterrupted(clock.now());
    if (recovered > 0) logger.warn({ recovered }, 'linear webhooks: resuming deliveries interrupted by a restart');
    this.#prune();
    this.#pruneTimer = clock.every(webhooks.pruneIntervalMs, () => this.#prune());
    this.#pump();
  }

  /** Wakes the worker (a delivery was queued). */
  notify(): void {
    if (this.#running) this.#pump();
  }

  /** Stops taking new deliveries and waits for the ones being handled. Unfinished ones stay queued for the next start. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#retryTimer?.cancel();
    this.#retryTimer = undefined;
    this.#retryAt = Infinity;
    this.#pruneTimer?.cancel();
    await Promise.allSettled([...this.#inFlight]);
    this.#settleIdle();
  }

  /** Resolves once nothing is being handled and nothing queued is due now (tests, shutdown). */
  idle(): Promise<void> {
    if (this.#inFlight.size === 0 && !this.#hasDueWork()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  #hasDueWork(): boolean {
    if (!this.#running) return false;
    try {
      return this.#o.store.hasRunnable(this.#o.clock.now());
    } catch {
      return false;
    }
  }

  #pump(): void {
    const { store, clock, logger, webhooks } = this.#o;
    while (this.#running && this.#inFlight.size < webhooks.concurrency) {
      let item: StoredDelivery | undefined;
      try {
        item = store.claimNext(clock.now());
      } catch (error) {
        logger.error({ err: errorMessage(error) }, 'linear webhooks: cannot read the queue');
        break;
      }
      if (!item) break;
      const run = this.#process(item).finally(() => {
        this.#inFlight.delete(run);
        this.#pump();
      });
      this.#inFlight.add(run);
    }
    this.#scheduleRetry();
    if (this.#inFlight.size === 0 && !this.#hasDueWork()) this.#settleIdle();
  }

  #scheduleRetry(): void {
    if (!this.#running) return;
    const now = this.#o.clock.now();
    let due: number | undefined;
    try {
      due = this.#o.store.nextDueAfter(now);
    } catch (error) {
      this.#o.logger.error({ err: errorMessage(error) }, 'linear webhooks: cannot read the queue');
      return;
    }
    if (due === undefined) return;
    if (this.#retryTimer && this.#retryAt <= due) return;
    this.#retryTimer?.cancel();
    this.#retryAt = due;
    this.#retryTimer = this.#o.clock.after(due - now, () => {
      this.#retryTimer = undefined;
      this.#retryAt = Infinity;
      this.#pump();
    });
  }

  /** Handles one claimed delivery and records the result. Never rejects (a store failure is logged; the item stays processing and is recovered on the next start). */
  async #process(item: StoredDelivery): Promise<void> {
    const { store, clock, logger, webhooks, handler } = this.#o;
    const meta = { delivery: item.deliveryId, type: item.eventType, action: item.action, attempt: item.attempts };
    try {
      try {
        const parsed = await parseLinearEvent(JSON.parse(item.payload) as unknown, { deliveryId: item.deliveryId, appUserId: this.#o.appUserId });
        if (parsed.kind === 'ignored') {
          logger.info({ ...meta, reason: parsed.reason }, 'linear webhook acknowledged, nothing to do');
          store.complete(item.seq, `ignored: ${parsed.reason}`, clock.now());
          return;
        }
        await handler.handle(parsed.event);
        store.complete(item.seq, `handled: ${parsed.event.type}`, clock.now());
      } catch (error) {
        const message = errorMessage(error);
        if (error instanceof InvalidPayloadError || item.attempts >= webhooks.maxAttempts) {
          logger.error({ ...meta, err: message }, 'linear webhook dead-lettered');
          store.fail(item.seq, message, clock.now(), null);
          return;
        }
        const delay = Math.min(webhooks.retryMaxMs, webhooks.retryInitialMs * 2 ** (item.attempts - 1));
        logger.warn({ ...meta, err: message, retryInMs: delay }, 'linear webhook handling failed; will retry');
        store.fail(item.seq, message, clock.now(), clock.now() + delay);
      }
    } catch (error) {
      logger.error({ ...meta, err: errorMessage(error) }, 'linear webhooks: cannot record the result of a delivery');
    }
  }

  #prune(): void {
    const { store, clock, logger, webhooks } = this.#o;
    try {
      const removed = store.prune(clock.now() - webhooks.retentionMs);
      if (removed > 0) logger.info({ removed }, 'linear webhooks: pruned old deliveries');
    } catch (error) {
      logger.error({ err: errorMessage(error) }, 'linear webhooks: prune failed');
    }
  }

  #settleIdle(): void {
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
