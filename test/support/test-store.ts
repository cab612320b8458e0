// The database of a component test: SQLite (a file or memory), or — with TEST_DATABASE=postgres, as `npm test`'s second
// pass runs the component suites — a database of its own on a PostgreSQL server this test process starts once. The
// same name opens the same database again (as a daemon restart reopens its state.db).
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { ManualClock } from '../../src/core/clock.ts';
import { openDatabase } from '../../src/store/database.ts';
import { sqliteKysely } from '../../src/store/kysely/connection.ts';
import { migratePostgres, openPostgres } from '../../src/store/kysely/postgres.ts';
import { MIGRATIONS } from '../../src/store/migrations.ts';
import type { Database } from '../../src/store/tables/index.ts';
import type { TestPostgres } from './postgres.ts';
import { startPostgres } from './postgres.ts';

/** A test's database and how to close it (the data stays for a reopen under the same name). */
export interface TestStore {
  db: Kysely<Database>;
  dialect: 'sqlite' | 'postgres';
  close(): Promise<void>;
}

/** A PostgreSQL server with a migrated template, started once per test process; fresh databases are cloned from it. */
export class PostgresDatabases {
  #server: Promise<TestPostgres> | null = null;
  readonly #created = new Set<string>();
  #count = 0;

  /** Starts the server and migrates the template, once. */
  #ready(): Promise<TestPostgres> {
    this.#server ??= (async () => {
      const server = await startPostgres();
      const template = openPostgres({ url: server.url });
      await migratePostgres(template, MIGRATIONS, new ManualClock(0));
      await template.destroy();
      return server;
    })();
    return this.#server;
  }

  /** A database named `name` (created from the template the first time; default a new name each call). */
  async open(name = `test_${++this.#count}`): Promise<Kysely<Database>> {
    const server = await this.#ready();
    if (!this.#created.has(name)) {
      const admin = openPostgres({ url: server.url, maxConnections: 1 });
      try {
        await sql`CREATE DATABASE ${sql.id(name)} TEMPLATE switchboard`.execute(admin);
      } finally {
        await admin.destroy();
      }
      this.#created.add(name);
    }
    return openPostgres({ url: server.url.replace(/\/switchboard$/, `/${name}`) });
  }

  /** Stops the server (if it started). */
  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    if (server) await (await server).stop();
  }
}

/** True when this test process runs the component suites on PostgreSQL (TEST_DATABASE=postgres). */
export const onPostgres = process.env.TEST_DATABASE === 'postgres';

let shared: PostgresDatabases | null = null;
const names = new Map<string, string>();

/**
 * Opens a test's database: SQLite at `path` (default in memory), or with TEST_DATABASE=postgres the PostgreSQL
 * database standing for `path` (the same path gives the same database). The server is stopped when the process exits.
 */
export async function openTestStore(path = ':memory:'): Promise<TestStore> {
  if (!onPostgres) return openSqliteStore(path);
  if (!shared) {
    const databases = new PostgresDatabases();
    shared = databases;
    // node:test ends a file's process once its tests are done; the server goes with it (stop is synchronous underneath).
    process.once('beforeExit', () => void databases.stop());
  }
  let name = path === ':memory:' ? undefined : names.get(path);
  if (path !== ':memory:' && !name) {
    name = `file_${names.size + 1}`;
    names.set(path, name);
  }
  const db = await shared.open(name);
  return { db, dialect: 'postgres', close: () => db.destroy() };
}

/** Opens SQLite at `path` (a file, or `:memory:`) as a TestStore, whatever TEST_DATABASE says. */
export function openSqliteStore(path: string): TestStore {
  const sqlite = openDatabase(path);
  return {
    db: sqliteKysely(sqlite),
    dialect: 'sqlite',
    close: async () => {
      sqlite.close();
    },
  };
}

/** Opens the test database standing for a file path (openTestStore, or openSqliteStore for SQLite-only suites). */
export type OpenStore = (path: string) => Promise<TestStore> | TestStore;
