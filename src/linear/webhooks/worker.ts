// Drains the durable delivery queue into the LinearEventHandler: at least once, attempts counted, exponential retry,
// dead letter after `maxAttempts`, deliveries of one agent session / issue one at a time, resumed after a restart.
// The results of a turn and the next claims are written in one transaction (one sync per turn, not two per delivery).
// Turns run on a WorkLoop: kicks coalesce, and the loop wakes itself on the clock when the earliest retry falls due.
import type { Clock, Timer } from '../../core/clock.ts';
import type { LinearConfig } from '../../core/config-linear.ts';
import { errorMessage } from '../../core/errors.ts';
import { faultPoint } from '../../core/fault.ts';
import type { Logger } from '../../core/logger.ts';
import type { StepResult } from '../../core/work-loop.ts';
import { WorkLoop } from '../../core/work-loop.ts';
import type { LinearDeliveryStore } from '../../store/linear-deliveries.ts';
import type { DeliveryOutcome, StoredDelivery } from '../../store/linear-delivery-types.ts';
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
  /**
   * True while deliveries wait to be committed by the intake: a turn then lets that commit (which Linear's 200 waits
   * for) go first, once — it runs right after, so it never starves.
   */
  intakePending?: () => boolean;
  /**
   * The intake's group commits under way (see WebhookIntake.committing): a turn waits for them before it claims, once,
   * so the 200s they owe go out before the turn's work fills the event loop.
   */
  intakeCommitting?: () => Promise<void> | undefined;
}

/** The queue consumer. `start` once; `notify` whenever a delivery was queued; `stop` on shutdown. */
export class WebhookWorker {
  #o: WebhookWorkerOptions;
  #running = false;
  #inFlight = 0;
  #finished: DeliveryOutcome[] = [];
  #turnScheduled = false;
  #batchTimer: Timer | undefined;
  #deferredOnce = false;
  /** Set when the earliest retry time may have changed (start, a retry outcome, the retry timer): read it again. */
  #retriesChanged = true;
  /** The earliest retry time known; the loop's wake-up (a kick re-arms it from here without reading the queue). */
  #retryAt = Infinity;
  #pruneTimer: Timer | undefined;
  #turnWaiters: (() => void)[] = [];
  #drainWaiters: (() => void)[] = [];
  #loop: WorkLoop;

  constructor(options: WebhookWorkerOptions) {
    this.#o = options;
    // A turn never throws (queue errors are logged inside it), so the backoff is only a guard.
    this.#loop = new WorkLoop({
      clock: options.clock,
      step: () => this.#turn(),
      retryDelay: () => options.webhooks.retryInitialMs,
    });
  }

  /**
   * Puts deliveries interrupted by a previous process back in the queue, prunes old ones, and starts working. Resolves
   * once the recovery is committed and the first turn is kicked.
   */
  async start(): Promise<void> {
    if (this.#running) return;
    const { store, clock, logger, webhooks } = this.#o;
    this.#running = true;
    this.#loop.start();
    this.#retriesChanged = true;
    const recovered = await store.recoverInterrupted(clock.now());
    if (recovered > 0) logger.warn({ recovered }, 'linear webhooks: resuming deliveries interrupted by a restart');
    await this.#prune();
    if (!this.#running) return;
    this.#pruneTimer = clock.every(webhooks.pruneIntervalMs, () => void this.#prune());
    this.#loop.kick();
  }

  /** Wakes the worker (a delivery was queued). */
  notify(): void {
    if (this.#running) this.#scheduleTurn();
  }

  /**
   * Stops taking new deliveries, waits (at most `stopGraceMs`) for the ones being handled and records their results.
   * Deliveries not finished stay queued (or `processing`, recovered at the next start).
   */
  async stop(): Promise<void> {
    const { clock, logger, webhooks } = this.#o;
    this.#running = false;
    if (this.#batchTimer) {
      this.#batchTimer.cancel();
      this.#batchTimer = undefined;
      this.#turnScheduled = false;
    }
    this.#retryAt = Infinity;
    this.#pruneTimer?.cancel();
    // The grace period starts now (before anything is awaited), so stop() is bounded from the moment it is called.
    let grace: Timer | undefined;
    const drained =
      this.#inFlight > 0
        ? new Promise<void>((resolve) => {
            this.#drainWaiters.push(resolve);
            grace = clock.after(webhooks.stopGraceMs, () => {
              logger.warn(
                { running: this.#inFlight },
                'linear webhooks: handlers still running at shutdown; their deliveries run again at the next start',
              );
              resolve();
            });
          })
        : Promise.resolve();
    await this.#loop.stop();
    await drained;
    grace?.cancel();
    await this.#turn();
  }

  /** Resolves once nothing is being handled, every result is recorded, and nothing queued can run now (tests, shutdown). */
  async idle(): Promise<void> {
    for (;;) {
      await this.#loop.idle();
      if (await this.#isIdle()) return;
      await new Promise<void>((resolve) => this.#turnWaiters.push(resolve));
    }
  }

  async #isIdle(): Promise<boolean> {
    if (this.#inFlight > 0 || this.#finished.length > 0 || this.#turnScheduled) return false;
    if (!this.#running) return true;
    try {
      return !(await this.#o.store.hasRunnable(this.#o.clock.now()));
    } catch {
      return true;
    }
  }

  /**
   * A turn soon (a kick of the loop): after `batchMs` on the clock (so what arrives meanwhile joins it), or on the next
   * tick when 0. After a stop the turn runs outside the loop, so late results are still recorded.
   */
  #scheduleTurn(): void {
    if (this.#turnScheduled) return;
    this.#turnScheduled = true;
    const run = () => {
      this.#batchTimer = undefined;
      this.#turnScheduled = false;
      if (this.#running) this.#loop.kick();
      else void this.#turn();
    };
    const batchMs = this.#o.webhooks.batchMs;
    if (batchMs > 0 && this.#running) this.#batchTimer = this.#o.clock.after(batchMs, run);
    else setImmediate(run);
  }

  /**
   * Records finished attempts and claims as many deliveries as there are free slots, in one transaction; then sleeps
   * until the earliest retry. Never rejects (queue errors are logged).
   */
  async #turn(): Promise<StepResult> {
    const { store, clock, logger, webhooks } = this.#o;
    if (this.#running && this.#retryAt <= clock.now()) {
      this.#retryAt = Infinity;
      this.#retriesChanged = true;
    }
    if (this.#running && !this.#deferredOnce && this.#o.intakePending?.()) {
      this.#deferredOnce = true;
      this.#turnScheduled = true;
      setImmediate(() => {
        this.#turnScheduled = false;
        if (this.#running) this.#loop.kick();
        else void this.#turn();
      });
      return this.#nextWake();
    }
    this.#deferredOnce = false;
    const committing = this.#running ? this.#o.intakeCommitting?.() : undefined;
    if (committing) await committing;
    const outcomes = this.#finished;
    this.#finished = [];
    const free = this.#running ? webhooks.concurrency - this.#inFlight : 0;
    let claimed: StoredDelivery[] = [];
    if (outcomes.length > 0 || free > 0) {
      try {
        claimed = await store.settleAndClaim(outcomes, clock.now(), Math.max(0, free));
      } catch (error) {
        // The outcomes are lost from memory: those deliveries stay `processing` and run again after a restart.
        logger.error(
          { err: errorMessage(error), unrecorded: outcomes.length },
          'linear webhooks: cannot update the queue',
        );
      }
    }
    for (const item of claimed) {
      this.#inFlight += 1;
      void this.#process(item).then((outcome) => {
        this.#inFlight -= 1;
        this.#finished.push(outcome);
        if (this.#inFlight === 0) this.#settleDrain();
        this.#scheduleTurn();
      });
    }
    // Retry times only appear with a retry outcome (or were left by the last process: checked at start).
    if (outcomes.some((o) => o.kind === 'retry')) this.#retriesChanged = true;
    await this.#scheduleRetry();
    this.#settleTurn();
    return this.#nextWake();
  }

  #nextWake(): StepResult {
    return this.#running && this.#retryAt !== Infinity
      ? { wakeInMs: Math.max(0, this.#retryAt - this.#o.clock.now()) }
      : 'quiet';
  }

  /** Reads the earliest retry time again when it may have changed; the loop wakes then. */
  async #scheduleRetry(): Promise<void> {
    if (!this.#running || !this.#retriesChanged) return;
    this.#retriesChanged = false;
    const now = this.#o.clock.now();
    let due: number | undefined;
    try {
      due = await this.#o.store.nextDueAfter(now);
    } catch (error) {
      this.#retriesChanged = true;
      this.#o.logger.error({ err: errorMessage(error) }, 'linear webhooks: cannot read the queue');
      return;
    }
    if (due !== undefined && due < this.#retryAt) this.#retryAt = due;
  }

  /** Handles one claimed delivery; resolves with its outcome (never rejects). */
  async #process(item: StoredDelivery): Promise<DeliveryOutcome> {
    const { clock, logger, webhooks, handler } = this.#o;
    const meta = { delivery: item.deliveryId, type: item.eventType, action: item.action, attempt: item.attempts };
    try {
      const parsed = await parseLinearEvent(JSON.parse(item.payload) as unknown, {
        deliveryId: item.deliveryId,
        appUserId: this.#o.appUserId,
      });
      if (parsed.kind === 'ignored') {
        logger.info({ ...meta, reason: parsed.reason }, 'linear webhook acknowledged, nothing to do');
        return { seq: item.seq, kind: 'done', outcome: `ignored: ${parsed.reason}` };
      }
      await handler.handle(parsed.event);
      // Crash tests: the handler's effects are done, the delivery is not yet marked done (it runs again after a restart).
      faultPoint('linear.worker.after-handle');
      return { seq: item.seq, kind: 'done', outcome: `handled: ${parsed.event.type}` };
    } catch (error) {
      const message = errorMessage(error);
      if (error instanceof InvalidPayloadError || item.attempts >= webhooks.maxAttempts) {
        logger.error({ ...meta, err: message }, 'linear webhook dead-lettered');
        return { seq: item.seq, kind: 'dead', error: message };
      }
      const delay = Math.min(webhooks.retryMaxMs, webhooks.retryInitialMs * 2 ** (item.attempts - 1));
      logger.warn({ ...meta, err: message, retryInMs: delay }, 'linear webhook handling failed; will retry');
      return { seq: item.seq, kind: 'retry', error: message, retryAt: clock.now() + delay };
    }
  }

  async #prune(): Promise<void> {
    const { store, clock, logger, webhooks } = this.#o;
    try {
      const removed = await store.prune(clock.now() - webhooks.retentionMs);
      if (removed > 0) logger.info({ removed }, 'linear webhooks: pruned old deliveries');
    } catch (error) {
      logger.error({ err: errorMessage(error) }, 'linear webhooks: prune failed');
    }
  }

  /** Wakes `idle()` callers after each turn to look again. */
  #settleTurn(): void {
    const waiters = this.#turnWaiters;
    this.#turnWaiters = [];
    for (const resolve of waiters) resolve();
  }

  #settleDrain(): void {
    const waiters = this.#drainWaiters;
    this.#drainWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
