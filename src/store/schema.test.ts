// The schema is written once (Kysely builders in the *-migrations.ts files) and built on both databases the store
// speaks: a fresh SQLite file must come out exactly as the SQL the daemon shipped before built it (so databases made
// then and now are one schema), and a real PostgreSQL server must end up with the same tables, columns and indexes.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { TestPostgres } from '../../test/support/postgres.ts';
import { postgresSkip, startPostgres } from '../../test/support/postgres.ts';
import { sqliteIndexSql, sqliteSchema } from '../../test/support/sqlite-schema.ts';
import { ManualClock } from '../core/clock.ts';
import { openDatabase } from './database.ts';
import { sqliteKysely } from './kysely/connection.ts';
import { migratePostgres, openPostgres } from './kysely/postgres.ts';
import { MIGRATIONS } from './migrations.ts';
import type { Database } from './tables/index.ts';

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(`../../test/fixtures/schema/${name}`, import.meta.url), 'utf8'));

describe('SQLite schema', () => {
  test('a fresh database has exactly the schema the raw-SQL migrations built', () => {
    const db = openDatabase(':memory:');
    assert.deepEqual(JSON.parse(JSON.stringify(sqliteSchema(db))), fixture('sqlite-schema.json'));
    assert.deepEqual(sqliteIndexSql(db), fixture('sqlite-indexes.json'));
    assert.deepEqual({ ...db.prepare('SELECT id, version FROM web_counter').get() }, { id: 1, version: 0 });
  });

  test('typed queries bind flags and large times, and return rows and change counts', async () => {
    const kysely = sqliteKysely(openDatabase(':memory:'));
    const at = 2 ** 41 + 7;
    await kysely
      .insertInto('cron_tasks')
      .values({
        id: 't1',
        name: 'nightly',
        schedule: '0 3 * * *',
        prompt: 'p',
        enabled: Number(false),
        created_at: at,
        updated_at: at,
      })
      .execute();
    const row = await kysely
      .selectFrom('cron_tasks')
      .select(['enabled', 'created_at'])
      .where('id', '=', 't1')
      .executeTakeFirstOrThrow();
    assert.deepEqual({ ...row }, { enabled: 0, created_at: at });
    const updated = await kysely
      .updateTable('cron_tasks')
      .set({ updated_at: at + 1 })
      .where('id', '=', 't1')
      .executeTakeFirst();
    assert.equal(updated.numUpdatedRows, 1n);
  });
});

describe('PostgreSQL schema', { skip: postgresSkip() }, () => {
  let server: TestPostgres;
  let pg: Kysely<Database>;
  before(async () => {
    server = await startPostgres();
    pg = openPostgres({ url: server.url });
  });
  after(async () => {
    await pg?.destroy();
    await server?.stop();
  });

  test('every migration runs, once, and concurrent migrators apply each step once', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const other = openPostgres({ url: server.url });
    try {
      const [first, second] = await Promise.all([
        migratePostgres(pg, MIGRATIONS, clock),
        migratePostgres(other, MIGRATIONS, clock),
      ]);
      const versions = MIGRATIONS.map((m) => m.version).sort((a, b) => a - b);
      assert.deepEqual(
        [...first, ...second].sort((a, b) => a - b),
        versions,
      );
      assert.deepEqual(await migratePostgres(pg, MIGRATIONS, clock), []);
    } finally {
      await other.destroy();
    }
  });

  test('the tables, columns, nullability and indexes match SQLite', async () => {
    const sqlite = openDatabase(':memory:');
    const lite = sqliteSchema(sqlite);
    const columns = await sql<{ table_name: string; column_name: string; is_nullable: string }>`
      SELECT table_name, column_name, is_nullable FROM information_schema.columns
      WHERE table_schema = 'public' AND table_name <> 'schema_migrations'`.execute(pg);
    const byTable: Record<string, Record<string, boolean>> = {};
    for (const c of columns.rows) (byTable[c.table_name] ??= {})[c.column_name] = c.is_nullable === 'NO';
    const expected: Record<string, Record<string, boolean>> = {};
    for (const [table, shape] of Object.entries(lite)) {
      if (table === 'schema_migrations') continue;
      expected[table] = Object.fromEntries(shape.cols.map((c) => [c.name, c.notnull === 1 || c.pk > 0]));
    }
    assert.deepEqual(byTable, expected);
    const indexes = await sql<{
      indexname: string;
    }>`SELECT indexname FROM pg_indexes WHERE schemaname = 'public'`.execute(pg);
    const pgIndexes = new Set(indexes.rows.map((r) => r.indexname));
    for (const name of Object.keys(sqliteIndexSql(sqlite)))
      assert.ok(pgIndexes.has(name), `index ${name} on PostgreSQL`);
  });

  test('typed queries round-trip times past 2^31 as numbers, and partial unique indexes hold', async () => {
    const at = 2 ** 41 + 7;
    await pg
      .insertInto('outbox_messages')
      .values({
        target_key: 'k',
        target: 't',
        channel: 'c',
        text: 'x',
        status: 'pending',
        next_attempt_at: at,
        created_at: at,
        updated_at: at,
        dedupe_key: 'once',
      })
      .execute();
    const row = await pg
      .selectFrom('outbox_messages')
      .select(['id', 'created_at', 'attempts'])
      .executeTakeFirstOrThrow();
    assert.deepEqual({ ...row }, { id: 1, created_at: at, attempts: 0 });
    const count = await pg
      .selectFrom('outbox_messages')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(count.n, 1);
    await assert.rejects(
      pg
        .insertInto('outbox_messages')
        .values({
          target_key: 'k',
          target: 't',
          channel: 'c',
          text: 'y',
          status: 'pending',
          next_attempt_at: at,
          created_at: at,
          updated_at: at,
          dedupe_key: 'once',
        })
        .execute(),
      /outbox_messages_dedupe/,
    );
  });
});
