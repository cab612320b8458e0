import { join } from 'node:path';
import type { Kysely } from 'kysely';
import type { Clock } from '../core/clock.ts';
import type { StoreConfig } from '../core/config-cluster.ts';
import type { Logger } from '../core/logger.ts';
import { openDatabase } from './database.ts';
import { closeSqlite, sqliteKysely } from './kysely/connection.ts';
import { MIGRATIONS } from './migrations.ts';
import type { Database } from './tables/index.ts';

/** The daemon's database, opened and migrated. */
export interface OpenedStore {
  db: Kysely<Database>;
  /** `sqlite`: the embedded file, a cluster of one. `postgres`: shared by every node of the cluster. */
  dialect: 'sqlite' | 'postgres';
  /** Where it is, for log lines (the PostgreSQL URL without its password). */
  where: string;
  close(): Promise<void>;
}

/** A PostgreSQL URL with its password replaced, safe for a log line. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(unparseable url)';
  }
}

/**
 * Opens the store the config names: `store.url` (PostgreSQL, every pending migration applied under the migration lock)
 * or `<home>/state.db` (SQLite, migrated as it opens). Resolves once it is ready for queries. `logger` receives the
 * PostgreSQL pool's connection errors (default: warnings on stderr).
 */
export async function openStore(
  config: StoreConfig,
  home: string,
  clock: Clock,
  logger?: Logger,
): Promise<OpenedStore> {
  if (config.url) {
    // pg is loaded only for a PostgreSQL store.
    const { migratePostgres, openPostgres } = await import('./kysely/postgres.ts');
    const db = openPostgres({
      url: config.url,
      maxConnections: config.maxConnections,
      ...(logger ? { logger } : {}),
    });
    try {
      await migratePostgres(db, MIGRATIONS, clock);
    } catch (error) {
      await db.destroy();
      throw error;
    }
    return { db, dialect: 'postgres', where: redactedUrl(config.url), close: () => db.destroy() };
  }
  const path = join(home, 'state.db');
  const sqlite = openDatabase(path, { clock });
  return {
    db: sqliteKysely(sqlite),
    dialect: 'sqlite',
    where: path,
    close: async () => {
      closeSqlite(sqlite);
    },
  };
}
