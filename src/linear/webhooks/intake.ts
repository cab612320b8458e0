// Webhook intake: verify, deduplicate by delivery id and write to the durable queue, all before the 200 is sent.
// Deliveries that arrive together are committed together (one sync per group, not per delivery): a group commits in
// the first turn of the event loop that brings it no new delivery, so a lone delivery commits at the next turn and a
// burst gathers into one commit (waiting for at most MAX_GROUP).
import type { Clock } from '../../core/clock.ts';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { LinearDeliveryStore } from '../../store/linear-deliveries.ts';
import type { NewDelivery } from '../../store/linear-delivery-types.ts';
import { bodyDigest, deliveryKey, OneParseWebhookClient, orderKey, verifyDelivery } from './verify.ts';

/** The most deliveries one group commit waits for before it commits (each still answered only after it). */
const MAX_GROUP = 64;

/** The headers of a delivery the intake reads. */
export interface DeliveryHeaders {
  signature: string | undefined;
  deliveryId: string | undefined;
}

/** What to answer Linear. 200 means the delivery is durably queued (or was already). */
export type IntakeResult =
  { status: 200; outcome: 'queued' | 'duplicate'; deliveryId: string } | { status: 400 | 401 | 503; error: string };

export interface WebhookIntakeOptions {
  /** The webhook signing secret. */
  secret: string;
  /** Where groups are committed (only its group insert is used). */
  store: Pick<LinearDeliveryStore, 'enqueueMany'>;
  clock: Clock;
  logger: Logger;
  /** Called after new deliveries are queued (wakes the worker). */
  onQueued?: () => void;
}

interface Waiting {
  delivery: NewDelivery;
  resolve: (result: IntakeResult) => void;
}

/** Takes in raw deliveries. Never rejects: every outcome is an IntakeResult. */
export class WebhookIntake {
  #o: WebhookIntakeOptions;
  #client: OneParseWebhookClient;
  #group: Waiting[] = [];
  /** The group commits under way (stored, then synced), each settled when its deliveries are answered. */
  #committing = new Set<Promise<void>>();

  constructor(options: WebhookIntakeOptions) {
    this.#o = options;
    this.#client = new OneParseWebhookClient(options.secret);
  }

  /**
   * Verifies the raw body, then stores it under its delivery id and resolves once it is committed. A known id, or the
   * same signed bytes under another id (the `linear-delivery` header is not signed), is a redelivery: acknowledged
   * (200) and not queued again — the group commit's insert tells (no read before it: one statement less on the path
   * of every new delivery). A store failure answers 503 so that Linear delivers again. Deliveries verified while a group
   * still grows from one turn of the event loop to the next join that group's one transaction (see #commitSoon).
   */
  receive(rawBody: Buffer, headers: DeliveryHeaders): Promise<IntakeResult> {
    try {
      return this.#receive(rawBody, headers);
    } catch (error) {
      // Nothing below is expected to throw; if it does, Linear hears 503 and delivers again (never a 500).
      return Promise.resolve(this.#unavailable(headers.deliveryId ?? '(none)', error));
    }
  }

  /** True while verified deliveries wait for their group commit. */
  get pending(): boolean {
    return this.#group.length > 0;
  }

  /**
   * Settles once the group commits under way now have answered their deliveries (undefined when none is): the worker
   * waits for them rather than fill the event loop while Linear's 200s wait.
   */
  committing(): Promise<void> | undefined {
    return this.#committing.size > 0 ? Promise.all(this.#committing).then(() => undefined) : undefined;
  }

  #receive(rawBody: Buffer, headers: DeliveryHeaders): Promise<IntakeResult> {
    const { clock, logger } = this.#o;
    const verified = verifyDelivery(this.#client, rawBody, headers.signature);
    if (!verified.ok) {
      logger.warn(
        { status: verified.status, reason: verified.error, delivery: headers.deliveryId },
        'linear webhook refused',
      );
      return Promise.resolve({ status: verified.status, error: verified.error });
    }
    const payload = verified.payload;
    const deliveryId = deliveryKey(headers.deliveryId, payload, rawBody);
    const digest = bodyDigest(rawBody);
    const eventType = typeof payload.type === 'string' ? payload.type : 'unknown';
    const action = typeof payload.action === 'string' ? payload.action : null;
    const delivery: NewDelivery = {
      deliveryId,
      eventType,
      action,
      orderKey: orderKey(payload, deliveryId),
      payload: verified.text,
      bodyDigest: digest,
      receivedAt: clock.now(),
    };
    return new Promise((resolve) => {
      if (this.#group.length === 0) this.#commitSoon(1);
      this.#group.push({ delivery, resolve });
    });
  }

  /**
   * Commits the waiting group in a later turn of the event loop: the first turn that brought it no new delivery beyond
   * the `seen` it had (a lone delivery: the next turn), or once it holds MAX_GROUP. Under load the deliveries that
   * arrive over a few turns share one sync instead of one each; an idle loop's turns are microseconds.
   */
  #commitSoon(seen: number): void {
    setImmediate(() => {
      const size = this.#group.length;
      if (size > seen && size < MAX_GROUP) this.#commitSoon(size);
      else this.#track(this.#commit());
    });
  }

  #track(commit: Promise<void>): void {
    this.#committing.add(commit);
    void commit.finally(() => this.#committing.delete(commit));
  }

  /** Commits the waiting group in one transaction, then answers each delivery (never before the commit). */
  async #commit(): Promise<void> {
    const group = this.#group;
    this.#group = [];
    let fresh: boolean[];
    try {
      fresh = await this.#o.store.enqueueMany(group.map((w) => w.delivery));
    } catch (error) {
      for (const w of group) w.resolve(this.#unavailable(w.delivery.deliveryId, error));
      return;
    }
    group.forEach((w, i) => {
      const { deliveryId, eventType, action } = w.delivery;
      if (!fresh[i]) {
        w.resolve(this.#duplicate(deliveryId, eventType, action));
        return;
      }
      this.#o.logger.debug({ delivery: deliveryId, type: eventType, action }, 'linear webhook queued');
      w.resolve({ status: 200, outcome: 'queued', deliveryId });
    });
    if (fresh.some(Boolean)) this.#o.onQueued?.();
  }

  #duplicate(deliveryId: string, eventType: string, action: string | null): IntakeResult {
    this.#o.logger.info(
      { delivery: deliveryId, type: eventType, action },
      'linear webhook redelivered; already taken in',
    );
    return { status: 200, outcome: 'duplicate', deliveryId };
  }

  #unavailable(deliveryId: string, error: unknown): IntakeResult {
    this.#o.logger.error({ delivery: deliveryId, err: errorMessage(error) }, 'linear webhook could not be stored');
    return { status: 503, error: 'could not store the delivery; deliver again later' };
  }
}
