// Wires the webhook intake, the durable delivery store and the worker for main.ts.
import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import type { LinearConfig } from '../../core/config-linear.ts';
import type { Logger } from '../../core/logger.ts';
import { LinearDeliveryStore } from '../../store/linear-deliveries.ts';
import type { LinearOAuthStore } from '../../store/linear-oauth.ts';
import type { Database } from '../../store/tables/index.ts';
import type { LinearApi } from '../api/types.ts';
import type { LinearEventHandler } from './events.ts';
import { WebhookIntake } from './intake.ts';
import { WebhookWorker } from './worker.ts';

export interface LinearWebhooks {
  intake: WebhookIntake;
  worker: WebhookWorker;
  deliveries: LinearDeliveryStore;
}

export interface LinearWebhooksDeps {
  config: LinearConfig;
  /** The signing secret (from requireLinearSecrets). */
  secret: string;
  /** The daemon's database (`sqliteKysely(db)` on SQLite). */
  db: Kysely<Database>;
  handler: LinearEventHandler;
  appUserId: () => Promise<string>;
  clock: Clock;
  logger: Logger;
}

/** Builds the intake and the worker over one delivery store; the intake wakes the worker. Call `worker.start()` after. */
export function buildLinearWebhooks(deps: LinearWebhooksDeps): LinearWebhooks {
  const deliveries = new LinearDeliveryStore(deps.db);
  const worker = new WebhookWorker({
    store: deliveries,
    handler: deps.handler,
    appUserId: deps.appUserId,
    clock: deps.clock,
    logger: deps.logger,
    webhooks: deps.config.webhooks,
    // Only asked while the worker runs (after start()), so `intake` below is set by then.
    intakePending: () => intake.pending,
    intakeCommitting: () => intake.committing(),
  });
  const intake = new WebhookIntake({
    secret: deps.secret,
    store: deliveries,
    clock: deps.clock,
    logger: deps.logger,
    onQueued: () => worker.notify(),
  });
  return { intake, worker, deliveries };
}

/**
 * The app user's id: from the stored OAuth installation when known, else `viewer` (asked once, then remembered; a
 * failed lookup is asked again next time). The id learned from `viewer` is stored with the OAuth tokens.
 */
export function appUserIdSource(
  api: Pick<LinearApi, 'viewer'>,
  oauthStore?: LinearOAuthStore,
  clock?: Clock,
  profile = 'default',
): () => Promise<string> {
  let known: string | undefined;
  return async () => {
    if (known) return known;
    const stored = await oauthStore?.tokens(profile);
    if (stored?.appUserId) {
      known = stored.appUserId;
      return known;
    }
    const viewer = await api.viewer();
    known = viewer.id;
    if (stored && oauthStore && clock) await oauthStore.saveIdentity(profile, viewer.id, viewer.name, clock.now());
    return known;
  };
}
