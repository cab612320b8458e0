import { join } from 'node:path';
import type { Harness } from '../../src/coding/harness.ts';
import type { PermissionGate } from '../../src/coding/permission-gate.ts';
import type { SessionManager } from '../../src/coding/session-manager.ts';
import type { Clock } from '../../src/core/clock.ts';
import type { Config, HarnessName } from '../../src/core/config.ts';
import type { CodingSessionStore } from '../../src/store/coding-sessions.ts';
import type { DatabaseSync } from '../../src/store/database.ts';
import { openDatabase } from '../../src/store/database.ts';
import { sqliteKysely } from '../../src/store/kysely/connection.ts';
import type { SessionLogs } from '../../src/store/session-logs.ts';
import { managerOver } from './session-manager-on.ts';

/** A SessionManager and the store under it, as the daemon builds them. */
export interface ManagerParts {
  db: DatabaseSync;
  store: CodingSessionStore;
  logs: SessionLogs;
  manager: SessionManager;
}

/**
 * Builds a SessionManager over `<dir>/state.db` and `<dir>/logs` (fsync batching 0, silent logger), with the given
 * harnesses or, by default, the real ones built from `config` (point their executables at the fakes in test/support).
 */
export function sessionManagerIn(
  dir: string,
  config: Config,
  clock: Clock,
  harnesses?: Record<HarnessName, Harness>,
  /** Builds the permission gate over the database, when the test wants one. */
  permissions?: (db: DatabaseSync) => PermissionGate,
): ManagerParts {
  const db = openDatabase(join(dir, 'state.db'));
  const parts = managerOver(sqliteKysely(db), dir, config, clock, {
    ...(harnesses ? { harnesses } : {}),
    ...(permissions ? { permissions: () => permissions(db) } : {}),
  });
  return { db, ...parts };
}
