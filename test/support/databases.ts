import { after, describe } from 'node:test';
import type { Kysely } from 'kysely';
import { openDatabase } from '../../src/store/database.ts';
import { sqliteKysely } from '../../src/store/kysely/connection.ts';
import type { DialectName } from '../../src/store/kysely/schema-kit.ts';
import type { Database } from '../../src/store/tables/index.ts';
import { postgresSkip } from './postgres.ts';
import { PostgresDatabases } from './test-store.ts';

/** A fresh, fully migrated database of one dialect, for one test. */
export interface FreshDatabase {
  db: Kysely<Database>;
  dialect: DialectName;
}

/**
 * Declares `suite` twice: once on SQLite (a fresh in-memory database per `fresh()`), once on a real PostgreSQL server
 * this file starts (a fresh database per `fresh()`, cloned from a template migrated once, so each test starts empty).
 * The PostgreSQL half is skipped, with the reason, when the server is not installed (never in CI).
 */
export function describeEachDatabase(title: string, suite: (fresh: () => Promise<FreshDatabase>) => void): void {
  describe(`${title} [sqlite]`, () => {
    suite(async () => ({ db: sqliteKysely(openDatabase(':memory:')), dialect: 'sqlite' }));
  });
  describe(`${title} [postgres]`, { skip: postgresSkip() }, () => {
    const databases = new PostgresDatabases();
    const opened: Kysely<Database>[] = [];
    after(async () => {
      await Promise.all(opened.map((db) => db.destroy()));
      await databases.stop();
    });
    suite(async () => {
      const db = await databases.open();
      opened.push(db);
      return { db, dialect: 'postgres' };
    });
  });
}
