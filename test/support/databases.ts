import { after, before, describe } from 'node:test';
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { ManualClock } from '../../src/core/clock.ts';
import { openDatabase } from '../../src/store/database.ts';
import { sqliteKysely } from '../../src/store/kysely/connection.ts';
import { migratePostgres, openPostgres } from '../../src/store/kysely/postgres.ts';
import type { DialectName } from '../../src/store/kysely/schema-kit.ts';
import { MIGRATIONS } from '../../src/store/migrations.ts';
import type { Database } from '../../src/store/tables/index.ts';
import type { TestPostgres } from './postgres.ts';
import { postgresSkip, startPostgres } from './postgres.ts';

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
    let server: TestPostgres | undefined;
    const opened: Kysely<Database>[] = [];
    let count = 0;
    before(async () => {
      server = await startPostgres();
      const template = openPostgres({ url: server.url });
      await migratePostgres(template, MIGRATIONS, new ManualClock(0));
      await template.destroy();
    });
    after(async () => {
      await Promise.all(opened.map((db) => db.destroy()));
      await server?.stop();
    });
    suite(async () => {
      if (!server) throw new Error('the PostgreSQL server did not start');
      const admin = openPostgres({ url: server.url, maxConnections: 1 });
      const name = `test_${++count}`;
      try {
        await sql`CREATE DATABASE ${sql.id(name)} TEMPLATE switchboard`.execute(admin);
      } finally {
        await admin.destroy();
      }
      const db = openPostgres({ url: server.url.replace(/\/switchboard$/, `/${name}`) });
      opened.push(db);
      return { db, dialect: 'postgres' };
    });
  });
}
