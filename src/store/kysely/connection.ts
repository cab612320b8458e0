import type { DatabaseSync } from 'node:sqlite';
import { Kysely } from 'kysely';
import type { Database } from '../tables/index.ts';
import { NodeSqliteDialect } from './node-sqlite-dialect.ts';

/**
 * One Kysely instance per SQLite connection: Kysely serializes a connection's transactions with its own lock, so two
 * instances over one connection could interleave a BEGIN inside another. Keyed weakly by the connection.
 */
const instances = new WeakMap<DatabaseSync, Kysely<Database>>();

/** The typed query builder over `db`, the daemon's SQLite connection (made once per connection, never closing it). */
export function sqliteKysely(db: DatabaseSync): Kysely<Database> {
  let kysely = instances.get(db);
  if (!kysely) {
    kysely = new Kysely<Database>({ dialect: new NodeSqliteDialect(db) });
    instances.set(db, kysely);
  }
  return kysely;
}
