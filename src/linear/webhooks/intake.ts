// Webhook intake: verify, deduplicate by delivery id and write to the durable queue, all before the 200 is sent.
import { LinearWebhookClient } from '@linear/sdk/webhooks';
import type { Clock } from '../../core/clock.ts';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { LinearDeliveryStore } from '../../store/linear-deliveries.ts';
import { deliveryKey, orderKey, verifyDelivery } from './verify.ts';

/** The headers of a delivery the intake reads. */
export interface DeliveryHeaders {
  signature: string | undefined;
  deliveryId: string | undefined;
}

/** What to answer Linear. 200 means the delivery is durably queued (or was already). */
export type IntakeResult =
  | { status: 200; outcome: 'queued' | 'duplicate'; deliveryId: string }
  | { status: 400 | 401 | 503; error: string };

export interface WebhookIntakeOptions {
  /** The webhook signing secret. */
  secret: string;
  store: LinearDeliveryStore;
  clock: Clock;
  logger: Logger;
  /** Called after a new delivery is queued (wakes the worker). */
  onQueued?: () => void;
}

/** Takes in raw deliveries. Never throws: every outcome is an IntakeResult. */
export class WebhookIntake {
  #o: WebhookIntakeOptions;
  #client: LinearWebhookClient;

  constructor(options: WebhookIntakeOptions) {
    this.#o = options;
    this.#client = new LinearWebhookClient(options.secret);
  }

  /**
   * Verifies the raw body, then stores it under its delivery id. A known id is a redelivery: acknowledged (200) and not
   * queued again. A store failure answers 503 so that Linear delivers again later.
   */
  receive(rawBody: Buffer, headers: DeliveryHeaders): IntakeResult {
    const { store, clock, logger } = this.#o;
    const verified = verifyDelivery(this.#client, rawBody, headers.signature);
    if (!verified.ok) {
      logger.warn({ status: verified.status, reason: verified.error, delivery: headers.deliveryId }, 'linear webhook refused');
      return { status: verified.status, error: verified.error };
    }
    const payload = verified.payload;
    const deliveryId = deliveryKey(headers.deliveryId, payload);
    const eventType = typeof payload.type === 'string' ? payload.type : 'unknown';
    const action = typeof payload.action === 'string' ? payload.action : null;
    let fresh: boolean;
    try {
      fresh = store.enqueue({ deliveryId, eventType, action, orderKey: orderKey(payload, deliveryId), payload: rawBody.toString('utf8'), receivedAt: clock.now() });
    } catch (error) {
      logger.error({ delivery: deliveryId, err: errorMessage(error) }, 'linear webhook could not be stored');
      return { status: 503, error: 'could not store the delivery; deliver again later' };
    }
    if (!fresh) {
      logger.info({ delivery: deliveryId, type: eventType, action }, 'linear webhook redelivered; already taken in');
      return { status: 200, outcome: 'duplicate', deliveryId };
    }
    logger.debug({ delivery: deliveryId, type: eventType, action }, 'linear webhook queued');
    this.#o.onQueued?.();
    return { status: 200, outcome: 'queued', deliveryId };
  }
}
