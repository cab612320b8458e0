import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'node:test';
import type { SessionSignal } from '../../src/coding/session.ts';
import type { SessionManager } from '../../src/coding/session-manager.ts';
import { ManualClock } from '../../src/core/clock.ts';
import type { Config } from '../../src/core/config.ts';
import { loadConfig } from '../../src/core/config-load.ts';
import type { CodingSessionStore } from '../../src/store/coding-sessions.ts';
import type { DatabaseSync } from '../../src/store/database.ts';
import type { SessionLogs } from '../../src/store/session-logs.ts';
import { ScriptedHarness } from './scripted-harness.ts';
import { sessionManagerIn } from './session-manager-in.ts';
import { tempDir } from './temp-dir.ts';

export interface ManagerFixture {
  home: string;
  workdir: string;
  config: Config;
  clock: ManualClock;
  db: DatabaseSync;
  store: CodingSessionStore;
  logs: SessionLogs;
  harness: ScriptedHarness;
  codex: ScriptedHarness;
  manager: SessionManager;
  /** A second manager over the same files, as after a daemon restart. */
  reopen(): ManagerFixture;
  close(): Promise<void>;
}

/** Builds a SessionManager over a real SQLite file and real logs in a temp dir, with scripted harnesses. */
export function managerFixture(
  overrides: Record<string, unknown> = {},
  existing?: { path: string; remove: () => void },
): ManagerFixture {
  const dir = existing ?? tempDir();
  const workdir = join(dir.path, 'work');
  mkdirSync(workdir, { recursive: true });
  const { config } = loadConfig({ home: dir.path, env: {}, overrides: { workspaces: [dir.path], ...overrides } });
  const clock = new ManualClock();
  const harness = new ScriptedHarness('claude');
  const codex = new ScriptedHarness('codex', false);
  const { db, store, logs, manager } = sessionManagerIn(dir.path, config, clock, {
    claude: harness,
    codex,
    gemini: new ScriptedHarness('gemini', false),
  });
  const fixture: ManagerFixture = {
    home: dir.path,
    workdir,
    config,
    clock,
    db,
    store,
    logs,
    harness,
    codex,
    manager,
    reopen: () => managerFixture(overrides, { path: dir.path, remove: dir.remove }),
    async close() {
      await manager.stop();
      db.close();
      dir.remove();
    },
  };
  return fixture;
}

/**
 * For each test of the enclosing describe: a fixture made by `make`, closed after the test, and every signal its
 * manager sends. `f` stands for the current test's fixture (it throws outside a test, naming `what`); `signals` is
 * emptied before each test.
 */
export function fixturePerTest<
  F extends { manager: { on(listener: (s: SessionSignal) => void): unknown }; close(): Promise<void> },
>(what: string, make: () => F | Promise<F>): { f: F; signals: SessionSignal[] } {
  let current: F | undefined;
  const signals: SessionSignal[] = [];
  beforeEach(async () => {
    current = await make();
    signals.length = 0;
    current.manager.on((s) => signals.push(s));
  });
  afterEach(async () => {
    const fixture = current;
    current = undefined;
    await fixture?.close();
  });
  const f = new Proxy({} as F, {
    get(_target, key) {
      if (!current) throw new Error(`${what}: the fixture exists only while a test runs`);
      return Reflect.get(current, key) as unknown;
    },
  });
  return { f, signals };
}

/** fixturePerTest of a fresh managerFixture (with `overrides`) for each test. */
export function managerPerTest(overrides: Record<string, unknown> = {}): {
  f: ManagerFixture;
  signals: SessionSignal[];
} {
  return fixturePerTest('managerPerTest', () => managerFixture(overrides));
}
