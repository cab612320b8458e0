import { DatabaseSync } from 'node:sqlite';
import type { Clock } from '../core/clock.ts';
import { systemClock } from '../core/clock.ts';
import { enforceMode, PRIVATE_FILE_MODE, touchPrivateFile } from '../core/private-files.ts';
import { sqliteKysely } from './kysely/connection.ts';
import { runCompiled } from './kysely/node-sqlite-dialect.ts';
import type { Migration } from './kysely/schema-kit.ts';
import { schemaKit } from './kysely/schema-kit.ts';
import { MIGRATIONS } from './migrations.ts';

export type { Migration } from './kysely/schema-kit.ts';
export type { DatabaseSync } from 'node:sqlite';

/** The files SQLite keeps next to a database in WAL mode (and the rollback journal of older runs). */
const COMPANION_SUFFIXES = ['-wal', '-shm', '-journal'];

/** What a database is opened with: its migrations (default all of them) and the clock that dates them. */
export interface OpenDatabaseOptions {
  migrations?: readonly Migration[];
  /** Dates each applied migration (`applied_at`); default the system clock. */
  clock?: Clock;
}

/**
 * Opens the SQLite database at `path` (":memory:" for tests) in WAL mode and applies pending migrations. A database file
 * is created (or kept) 0600 before SQLite opens it, so the -wal and -shm files SQLite makes take that mode too; ones left
 * by an older run are made 0600 as well. The database holds OAuth tokens and chat transcripts.
 */
export function openDatabase(path: string, options: OpenDatabaseOptions = {}): DatabaseSync {
  const onDisk = path !== ':memory:' && path !== '';
  if (onDisk) touchPrivateFile(path);
  const db = new DatabaseSync(path);
  if (onDisk) for (const suffix of COMPANION_SUFFIXES) enforceMode(`${path}${suffix}`, PRIVATE_FILE_MODE);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = FULL');
  db.exec('PRAGMA foreign_keys = ON');
  db.exec('PRAGMA busy_timeout = 5000');
  migrate(db, options.migrations ?? MIGRATIONS, options.clock ?? systemClock());
  return db;
}

/**
 * Applies every migration not applied yet, in version order, on the SQLite connection `db`: each step's Kysely builders
 * are compiled for SQLite and run synchronously, before anything else uses the file. Versions are tracked one by one (not as a high-water mark),
 * so each domain can number its steps in its own range (see migrations.ts). Returns the versions applied.
 */
export function migrate(db: DatabaseSync, migrations: readonly Migration[], clock: Clock): number[] {
  db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)',
  );
  const done = new Set(
    (db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version),
  );
  const applied: number[] = [];
  const sorted = [...migrations].sort((a, b) => a.version - b.version);
  const kit = schemaKit(sqliteKysely(db), 'sqlite');
  for (const migration of sorted) {
    if (done.has(migration.version)) continue;
    transaction(db, () => {
      for (const step of migration.up(kit)) runCompiled(db, step.compile());
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        migration.version,
        migration.name,
        clock.now(),
      );
    });
    applied.push(migration.version);
  }
  return applied;
}

/** Runs one migration step's `fn` inside BEGIN IMMEDIATE … COMMIT, rolling back if it throws. */
function transaction(db: DatabaseSync, fn: () => void): void {
  db.exec('BEGIN IMMEDIATE');
  try {
    fn();
    db.exec('COMMIT');
  } catch (error) {
    db.exec('ROLLBACK');
    throw error;
  }
}
