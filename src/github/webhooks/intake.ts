// GitHub webhook intake: verify the signature on the raw body, then store the delivery under its `X-GitHub-Delivery`
// id (a redelivery is acknowledged and not queued again), all before the 200 is sent. The worker processes it later.
import type { Clock } from '../../core/clock.ts';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { GithubDeliveryStore } from '../../store/github-deliveries.ts';
import { verifySignature } from './signature.ts';

/** The headers of a delivery the intake reads. */
export interface GithubDeliveryHeaders {
  signature: string | undefined;
  deliveryId: string | undefined;
  event: string | undefined;
}

/** What to answer GitHub. 200 means the delivery is durably queued (or was already). */
export type GithubIntakeResult =
  | { status: 200; outcome: 'queued' | 'duplicate' | 'ignored'; deliveryId: string }
  | { status: 400 | 401 | 503; error: string };

/** What the intake needs. */
export interface GithubIntakeOptions {
  secret: string;
  store: GithubDeliveryStore;
  clock: Clock;
  logger: Logger;
  /** Called after a new delivery is queued (wakes the worker). */
  onQueued?: () => void;
}

const DELIVERY_ID = /^[A-Za-z0-9-]{1,100}$/;
const EVENT = /^[a-z_]{1,64}$/;

/** Takes in raw deliveries. Never rejects: every outcome is a GithubIntakeResult. */
export class GithubWebhookIntake {
  readonly #o: GithubIntakeOptions;

  constructor(options: GithubIntakeOptions) {
    this.#o = options;
  }

  /**
   * Verifies `rawBody` against `X-Hub-Signature-256` (401 when it does not match), checks the headers and that the
   * body is a JSON object (400), stores it and resolves after the commit (503 when the store fails, so GitHub may
   * deliver again). `ping` is answered 200 and not stored.
   */
  async receive(rawBody: Buffer, headers: GithubDeliveryHeaders): Promise<GithubIntakeResult> {
    const { logger, clock, store } = this.#o;
    if (!verifySignature(this.#o.secret, rawBody, headers.signature)) {
      logger.warn({ delivery: headers.deliveryId, event: headers.event }, 'github webhook refused: bad signature');
      return { status: 401, error: 'bad signature' };
    }
    const deliveryId = headers.deliveryId ?? '';
    const event = headers.event ?? '';
    if (!DELIVERY_ID.test(deliveryId) || !EVENT.test(event))
      return { status: 400, error: 'missing or malformed X-GitHub-Delivery / X-GitHub-Event' };
    let payload: unknown;
    try {
      payload = JSON.parse(rawBody.toString('utf8'));
    } catch {
      return { status: 400, error: 'the body is not JSON' };
    }
    if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
      return { status: 400, error: 'the body is not a JSON object' };
    if (event === 'ping') return { status: 200, outcome: 'ignored', deliveryId };
    const action = (payload as { action?: unknown }).action;
    try {
      const fresh = await store.enqueue({
        deliveryId,
        event,
        action: typeof action === 'string' ? action : null,
        payload: rawBody.toString('utf8'),
        receivedAt: clock.now(),
      });
      if (!fresh) {
        logger.info({ delivery: deliveryId, event }, 'github webhook redelivered; already taken in');
        return { status: 200, outcome: 'duplicate', deliveryId };
      }
    } catch (error) {
      logger.error({ delivery: deliveryId, err: errorMessage(error) }, 'github webhook could not be stored');
      return { status: 503, error: 'could not store the delivery; deliver again later' };
    }
    logger.debug({ delivery: deliveryId, event }, 'github webhook queued');
    this.#o.onQueued?.();
    return { status: 200, outcome: 'queued', deliveryId };
  }
}
