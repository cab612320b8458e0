import type { Migration } from './database.ts';

/**
 * Linear's schema steps (range 400–419): OAuth tokens and authorize states, the webhook delivery table, which is
 * both the durable dedup record of every delivery id and the queue the webhook worker drains, and the ledger of
 * effects on Linear (linear-effects.ts).
 */
export const LINEAR_MIGRATIONS: readonly Migration[] = [
  {
    version: 400,
    name: 'linear oauth tokens and states, webhook deliveries',
    sql: `
      CREATE TABLE linear_oauth_tokens (
        profile TEXT PRIMARY KEY,
        access_token TEXT NOT NULL,
        refresh_token TEXT,
        token_type TEXT NOT NULL,
        scope TEXT NOT NULL,
        expires_at INTEGER,
        app_user_id TEXT,
        app_user_name TEXT,
        organization_id TEXT,
        organization_name TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE TABLE linear_oauth_states (
        state TEXT PRIMARY KEY,
        redirect_uri TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        consumed_at INTEGER,
        outcome TEXT
      );
      CREATE TABLE linear_webhook_deliveries (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        delivery_id TEXT NOT NULL UNIQUE,
        event_type TEXT NOT NULL,
        action TEXT,
        order_key TEXT NOT NULL,
        payload TEXT NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        last_error TEXT,
        outcome TEXT,
        received_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX linear_webhook_deliveries_status ON linear_webhook_deliveries(status, next_attempt_at);
      CREATE INDEX linear_webhook_deliveries_open ON linear_webhook_deliveries(order_key, seq) WHERE status IN ('pending', 'processing');
      CREATE INDEX linear_webhook_deliveries_updated ON linear_webhook_deliveries(updated_at);
    `,
  },
  {
    version: 401,
    name: 'linear webhook deliveries: digest of the signed body (a replay under a new delivery id is a redelivery)',
    sql: `
      ALTER TABLE linear_webhook_deliveries ADD COLUMN body_digest TEXT;
      CREATE UNIQUE INDEX linear_webhook_deliveries_digest ON linear_webhook_deliveries(body_digest);
    `,
  },
  {
    version: 402,
    name: 'linear effect ledger: one row per effect on Linear (claimed before it is sent, done after)',
    sql: `
      CREATE TABLE linear_effects (
        key TEXT PRIMARY KEY,
        state TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX linear_effects_updated ON linear_effects(updated_at);
    `,
  },
  {
    version: 403,
    name: 'linear webhook deliveries: pending deliveries in arrival order (the worker claims without sorting)',
    // The (status, next_attempt_at) index is replaced: one index fewer to write at every status change.
    sql: `
      CREATE INDEX linear_webhook_deliveries_pending ON linear_webhook_deliveries(seq) WHERE status = 'pending';
      DROP INDEX linear_webhook_deliveries_status;
    `,
  },
];
