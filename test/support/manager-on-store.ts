// A SessionManager over the test's database (openTestStore: SQLite, or PostgreSQL with TEST_DATABASE=postgres) and real
// logs in a temp dir, with scripted harnesses: managerFixture's counterpart for the suites that run on both databases.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import type { SessionSignal } from '../../src/coding/session.ts';
import type { SessionManager } from '../../src/coding/session-manager.ts';
import { ManualClock } from '../../src/core/clock.ts';
import type { Config } from '../../src/core/config.ts';
import { loadConfig } from '../../src/core/config-load.ts';
import type { CodingSessionStore } from '../../src/store/coding-sessions.ts';
import type { SessionLogs } from '../../src/store/session-logs.ts';
import type { Database } from '../../src/store/tables/index.ts';
import { fixturePerTest } from './manager-fixture.ts';
import { ScriptedHarness } from './scripted-harness.ts';
import { sessionManagerOn } from './session-manager-on.ts';
import { tempDir } from './temp-dir.ts';
import type { OpenStore, TestStore } from './test-store.ts';

/** A SessionManager, its store and harnesses, over the test's database. */
export interface StoreManagerFixture {
  home: string;
  workdir: string;
  config: Config;
  clock: ManualClock;
  db: Kysely<Database>;
  dialect: TestStore['dialect'];
  store: CodingSessionStore;
  logs: SessionLogs;
  harness: ScriptedHarness;
  codex: ScriptedHarness;
  manager: SessionManager;
  /** A second manager over the same files and database, as after a daemon restart (its close leaves the files). */
  reopen(): Promise<StoreManagerFixture>;
  /** Stops the manager and closes the database; removes the temp dir unless this fixture is a reopen. */
  close(): Promise<void>;
}

/** Where a fixture lives and what it is built with, beyond the config overrides. */
export interface ManagerFixtureOptions {
  /** The folder of an earlier fixture (a reopen); default a new temp dir, removed on close. */
  existing?: { path: string };
  /** Builds the session store over the database (a test's subclass); default CodingSessionStore. */
  store?: (db: Kysely<Database>) => CodingSessionStore;
}

/** Builds a SessionManager over `open(<dir>/state.db)` and `<dir>/logs` (see ManagerFixtureOptions). */
export async function openManagerFixture(
  open: OpenStore,
  overrides: Record<string, unknown> = {},
  options: ManagerFixtureOptions = {},
): Promise<StoreManagerFixture> {
  const { existing } = options;
  const dir: { path: string; remove?: () => void } = existing ?? tempDir();
  const workdir = join(dir.path, 'work');
  mkdirSync(workdir, { recursive: true });
  const { config } = loadConfig({ home: dir.path, env: {}, overrides: { workspaces: [dir.path], ...overrides } });
  const clock = new ManualClock();
  const harness = new ScriptedHarness('claude');
  const codex = new ScriptedHarness('codex', false);
  const parts = await sessionManagerOn(dir.path, config, clock, open, {
    harnesses: { claude: harness, codex, gemini: new ScriptedHarness('gemini', false) },
    ...(options.store ? { store: options.store } : {}),
  });
  return {
    home: dir.path,
    workdir,
    config,
    clock,
    db: parts.db,
    dialect: parts.dialect,
    store: parts.store,
    logs: parts.logs,
    harness,
    codex,
    manager: parts.manager,
    reopen: () => openManagerFixture(open, overrides, { ...options, existing: { path: dir.path } }),
    async close() {
      await parts.close();
      if (!existing) dir.remove?.();
    },
  };
}

/**
 * For each test of the enclosing describe: a fresh openManagerFixture (over `open`, with `overrides`), closed after the
 * test, and every signal its manager sends. `f` stands for the current test's fixture (it throws outside a test);
 * `signals` is emptied before each test.
 */
export function managerPerTestOn(
  open: OpenStore,
  overrides: Record<string, unknown> = {},
): { f: StoreManagerFixture; signals: SessionSignal[] } {
  return fixturePerTest('managerPerTestOn', () => openManagerFixture(open, overrides));
}
