import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import { createLogger } from '../../core/logger.ts';
import type { Database } from '../tables/index.ts';
import type { Migration } from './schema-kit.ts';
import { schemaKit } from './schema-kit.ts';

/** PostgreSQL type ids whose text form is parsed to a JS number: int8 (times, counts) and numeric (sums). */
const INT8_OID = 20;
const NUMERIC_OID = 1700;

/** Key of the advisory lock that serializes migrations across daemons sharing one database. */
const MIGRATION_LOCK_KEY = 0x5b_0a_4d;

/** What a PostgreSQL store is opened with. */
export interface PostgresOptions {
  /** A `postgres://` connection string. */
  url: string;
  /** Pool size; default 10. */
  maxConnections?: number;
  /** Where the pool's connection errors are logged (default: warnings on stderr). */
  logger?: Logger;
}

/** How a column's text form becomes a JS value: int8 and numeric as numbers, everything else as `pg` parses it. */
function textParser(oid: number): (value: string) => unknown {
  if (oid === INT8_OID || oid === NUMERIC_OID) return Number;
  return pg.types.getTypeParser(oid, 'text') as (value: string) => unknown;
}

/**
 * Makes every client of `pool` survive its connection dying (the server ended it: `idle_in_transaction_session_timeout`,
 * `pg_terminate_backend`, a restart, a network cut). `pg` emits `'error'` on the client, and an `'error'` event nobody
 * listens to ends the process: the pool listens only while the client is idle, so a client checked out (inside a
 * transaction, between two statements) had none. Here the pool's `'error'` (idle clients) and each new client's own
 * `'error'` (for its whole life) are logged; the query that was running, or the next one on that client, rejects, the
 * caller's rollback or retry runs, and the pool drops the broken client when it is released.
 */
export function guardPoolErrors(pool: pg.Pool, logger: Logger): void {
  // Each client's listener logs (idle or checked out); the pool's re-emission for an idle client needs a listener too.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    client.on('error', (error) =>
      logger.warn({ err: error.message }, 'a PostgreSQL connection failed; the pool replaces it'),
    );
  });
}

/**
 * The typed query builder over a PostgreSQL pool at `options.url`. BIGINT and NUMERIC come back as JS numbers (every
 * integer the store keeps is an epoch-millisecond time or a count, far inside 2^53). A connection the server ends is
 * logged and replaced, never an uncaught error (see guardPoolErrors). Close it with `destroy()`.
 */
export function openPostgres(options: PostgresOptions): Kysely<Database> {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.maxConnections ?? 10,
    types: { getTypeParser: textParser as typeof pg.types.getTypeParser },
  });
  guardPoolErrors(pool, options.logger ?? createLogger({ level: 'warn', destination: process.stderr }));
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}

/**
 * Applies every migration `db` (PostgreSQL) has not applied yet, in version order, each in its own transaction under a
 * transaction-scoped advisory lock, so daemons starting together apply each step once. Returns the versions applied.
 */
export async function migratePostgres(
  db: Kysely<Database>,
  migrations: readonly Migration[],
  clock: Clock,
): Promise<number[]> {
  await db.transaction().execute(async (trx) => {
    // Concurrent CREATE TABLE IF NOT EXISTS can still collide in PostgreSQL's catalog: take the lock first.
    await sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`.execute(trx);
    await sql`CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`.execute(
      trx,
    );
  });
  const applied: number[] = [];
  const sorted = [...migrations].sort((a, b) => a.version - b.version);
  for (const migration of sorted) {
    const ran = await db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`.execute(trx);
      const done = await sql<{
        version: number;
      }>`SELECT version FROM schema_migrations WHERE version = ${migration.version}`.execute(trx);
      if (done.rows.length > 0) return false;
      for (const step of migration.up(schemaKit(trx, 'postgres'))) await trx.executeQuery(step.compile());
      await sql`INSERT INTO schema_migrations (version, name, applied_at) VALUES (${migration.version}, ${migration.name}, ${clock.now()})`.execute(
        trx,
      );
      return true;
    });
    if (ran) applied.push(migration.version);
  }
  return applied;
}
