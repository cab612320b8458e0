import type { Kysely } from 'kysely';
import { PostgresAdapter } from 'kysely';
import type { Database } from './tables/index.ts';

/**
 * True when `db` is PostgreSQL: a store other nodes of the cluster write too (a cache of what was read here goes stale
 * without a write here), and the one that has a launch queue and cross-node commands. False on SQLite (one node).
 */
export function isShared(db: Kysely<Database>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
