// sessionManagerIn's counterpart for the suites that run on both databases: a SessionManager over the test's database
// (openTestStore: SQLite, or PostgreSQL with TEST_DATABASE=postgres) and real logs in `dir`.
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import type { Harness } from '../../src/coding/harness.ts';
import { createHarnesses } from '../../src/coding/harnesses.ts';
import type { PermissionGate } from '../../src/coding/permission-gate.ts';
import { SessionManager } from '../../src/coding/session-manager.ts';
import type { Clock } from '../../src/core/clock.ts';
import type { Config, HarnessName } from '../../src/core/config.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { CodingSessionStore } from '../../src/store/coding-sessions.ts';
import { SessionLogs } from '../../src/store/session-logs.ts';
import type { Database } from '../../src/store/tables/index.ts';
import type { OpenStore, TestStore } from './test-store.ts';

/** A SessionManager and the store under it, as the daemon builds them, over the test's database. */
export interface StoreManagerParts {
  db: Kysely<Database>;
  dialect: TestStore['dialect'];
  store: CodingSessionStore;
  logs: SessionLogs;
  manager: SessionManager;
  /** Stops the manager, then closes the database (the files stay; the caller removes `dir`). */
  close(): Promise<void>;
}

/** What sessionManagerOn builds beyond the manager: its harnesses and permission gate. */
export interface StoreManagerOptions {
  /** The harnesses; default the real ones built from `config` (point their executables at the fakes). */
  harnesses?: Record<HarnessName, Harness>;
  /** Builds the permission gate over the database, when the test wants one. */
  permissions?: (db: Kysely<Database>) => PermissionGate;
  /** Builds the session store over the database (a test's subclass); default CodingSessionStore. */
  store?: (db: Kysely<Database>) => CodingSessionStore;
}

/**
 * A SessionManager over `db` and `<dir>/logs` (fsync batching 0, silent logger), with `options`' harnesses (default the
 * real ones built from `config`), permission gate and store. Synchronous: sessionManagerIn builds on it too.
 */
export function managerOver(
  db: Kysely<Database>,
  dir: string,
  config: Config,
  clock: Clock,
  options: StoreManagerOptions = {},
): Pick<StoreManagerParts, 'store' | 'logs' | 'manager'> {
  const store = options.store ? options.store(db) : new CodingSessionStore(db);
  const logs = new SessionLogs(join(dir, 'logs'), { fsyncBatchMs: 0, now: () => clock.now() });
  const manager = new SessionManager({
    config,
    clock,
    logger: silentLogger(),
    store,
    logs,
    harnesses: options.harnesses ?? createHarnesses(config, silentLogger()),
    ...(options.permissions ? { permissions: options.permissions(db) } : {}),
  });
  return { store, logs, manager };
}

/** Builds a SessionManager over `open(<dir>/state.db)` and `<dir>/logs` (see managerOver). */
export async function sessionManagerOn(
  dir: string,
  config: Config,
  clock: Clock,
  open: OpenStore,
  options: StoreManagerOptions = {},
): Promise<StoreManagerParts> {
  const opened = await open(join(dir, 'state.db'));
  const { store, logs, manager } = managerOver(opened.db, dir, config, clock, options);
  return {
    db: opened.db,
    dialect: opened.dialect,
    store,
    logs,
    manager,
    async close() {
      await manager.stop();
      await opened.close();
    },
  };
}
