import type { DatabaseSync } from 'node:sqlite';
import { Kysely } from 'kysely';
import type { Database } from '../tables/index.ts';
import { NodeSqliteDialect } from './node-sqlite-dialect.ts';
import type { WalFile, WalSync } from './wal-sync.ts';
import { walSyncFor } from './wal-sync.ts';
import { WriteGroup, WriteGroupPlugin } from './write-group.ts';

/**
 * One Kysely instance (with one write group and one WAL syncer) per SQLite connection: Kysely serializes a
 * connection's transactions with its own lock, so two instances over one connection could interleave a BEGIN inside
 * another. Keyed weakly by the connection.
 */
const instances = new WeakMap<DatabaseSync, { kysely: Kysely<Database>; group: WriteGroup; sync: WalSync }>();

/**
 * The typed query builder over `db`, the daemon's SQLite connection (made once per connection, never closing it). Every
 * write answers only once it is durable (see write-group.ts and wal-sync.ts); `walFile` (tests) replaces the file
 * system calls that sync the WAL, and only counts for the call that makes the instance.
 */
export function sqliteKysely(db: DatabaseSync, options: { walFile?: WalFile } = {}): Kysely<Database> {
  let instance = instances.get(db);
  if (!instance) {
    const sync = walSyncFor(db, options.walFile);
    const group = new WriteGroup(db, sync);
    const kysely = new Kysely<Database>({
      dialect: new NodeSqliteDialect(db, group, sync),
      plugins: [new WriteGroupPlugin(group)],
    });
    instance = { kysely, group, sync };
    instances.set(db, instance);
  }
  return instance.kysely;
}

/**
 * Commits the writes of `db`'s open write group now (see write-group.ts), closes `db` (SQLite checkpoints the WAL into
 * the database file and syncs it), then its WAL syncer. Resolves once all of that is done.
 */
export async function closeSqlite(db: DatabaseSync): Promise<void> {
  const instance = instances.get(db);
  instance?.group.commitNow();
  db.close();
  await instance?.sync.close();
}
