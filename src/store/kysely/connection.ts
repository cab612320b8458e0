import type { DatabaseSync } from 'node:sqlite';
import { Kysely } from 'kysely';
import type { Database } from '../tables/index.ts';
import { NodeSqliteDialect } from './node-sqlite-dialect.ts';
import { WriteGroup, WriteGroupPlugin } from './write-group.ts';

/**
 * One Kysely instance (and one write group) per SQLite connection: Kysely serializes a connection's transactions with
 * its own lock, so two instances over one connection could interleave a BEGIN inside another. Keyed weakly by the
 * connection.
 */
const instances = new WeakMap<DatabaseSync, { kysely: Kysely<Database>; group: WriteGroup }>();

/** The typed query builder over `db`, the daemon's SQLite connection (made once per connection, never closing it). */
export function sqliteKysely(db: DatabaseSync): Kysely<Database> {
  let instance = instances.get(db);
  if (!instance) {
    const group = new WriteGroup(db);
    const kysely = new Kysely<Database>({
      dialect: new NodeSqliteDialect(db, group),
      plugins: [new WriteGroupPlugin(group)],
    });
    instance = { kysely, group };
    instances.set(db, instance);
  }
  return instance.kysely;
}

/** Commits the writes of `db`'s open write group now (see write-group.ts), then closes `db`. */
export function closeSqlite(db: DatabaseSync): void {
  instances.get(db)?.group.commitNow();
  db.close();
}
