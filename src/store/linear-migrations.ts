import type { Migration } from './kysely/schema-kit.ts';

/**
 * Linear's schema steps (range 400–419): OAuth tokens and authorize states, the webhook delivery table, which is
 * both the durable dedup record of every delivery id and the queue the webhook worker drains, and the ledger of
 * effects on Linear (linear-effects.ts).
 */
export const LINEAR_MIGRATIONS: readonly Migration[] = [
  {
    version: 400,
    name: 'linear oauth tokens and states, webhook deliveries',
    up: ({ db, int, serial, partial }) => [
      db.schema
        .createTable('linear_oauth_tokens')
        .addColumn('profile', 'text', (c) => c.primaryKey())
        .addColumn('access_token', 'text', (c) => c.notNull())
        .addColumn('refresh_token', 'text')
        .addColumn('token_type', 'text', (c) => c.notNull())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('expires_at', int)
        .addColumn('app_user_id', 'text')
        .addColumn('app_user_name', 'text')
        .addColumn('organization_id', 'text')
        .addColumn('organization_name', 'text')
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('updated_at', int, (c) => c.notNull()),
      db.schema
        .createTable('linear_oauth_states')
        .addColumn('state', 'text', (c) => c.primaryKey())
        .addColumn('redirect_uri', 'text', (c) => c.notNull())
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('expires_at', int, (c) => c.notNull())
        .addColumn('consumed_at', int)
        .addColumn('outcome', 'text'),
      db.schema
        .createTable('linear_webhook_deliveries')
        .addColumn('seq', int, serial)
        .addColumn('delivery_id', 'text', (c) => c.notNull().unique())
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('action', 'text')
        .addColumn('order_key', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', int, (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', int, (c) => c.notNull())
        .addColumn('last_error', 'text')
        .addColumn('outcome', 'text')
        .addColumn('received_at', int, (c) => c.notNull())
        .addColumn('updated_at', int, (c) => c.notNull()),
      db.schema
        .createIndex('linear_webhook_deliveries_status')
        .on('linear_webhook_deliveries')
        .columns(['status', 'next_attempt_at']),
      partial(
        db.schema
          .createIndex('linear_webhook_deliveries_open')
          .on('linear_webhook_deliveries')
          .columns(['order_key', 'seq']),
        "status IN ('pending', 'processing')",
      ),
      db.schema.createIndex('linear_webhook_deliveries_updated').on('linear_webhook_deliveries').column('updated_at'),
    ],
  },
  {
    version: 401,
    name: 'linear webhook deliveries: digest of the signed body (a replay under a new delivery id is a redelivery)',
    up: ({ db }) => [
      db.schema.alterTable('linear_webhook_deliveries').addColumn('body_digest', 'text'),
      db.schema
        .createIndex('linear_webhook_deliveries_digest')
        .unique()
        .on('linear_webhook_deliveries')
        .column('body_digest'),
    ],
  },
  {
    version: 402,
    name: 'linear effect ledger: one row per effect on Linear (claimed before it is sent, done after)',
    up: ({ db, int }) => [
      db.schema
        .createTable('linear_effects')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('updated_at', int, (c) => c.notNull()),
      db.schema.createIndex('linear_effects_updated').on('linear_effects').column('updated_at'),
    ],
  },
  {
    version: 403,
    name: 'linear webhook deliveries: pending deliveries in arrival order (the worker claims without sorting)',
    // The (status, next_attempt_at) index is replaced: one index fewer to write at every status change.
    up: ({ db, partial }) => [
      partial(
        db.schema.createIndex('linear_webhook_deliveries_pending').on('linear_webhook_deliveries').column('seq'),
        "status = 'pending'",
      ),
      db.schema.dropIndex('linear_webhook_deliveries_status'),
    ],
  },
];
