import { sessionManagerIn } from './session-manager-in.ts';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ManualClock } from '../../src/core/clock.ts';
import type { Config } from '../../src/core/config.ts';
import { loadConfig } from '../../src/core/config-load.ts';
import { SessionManager } from '../../src/coding/session-manager.ts';
import { CodingSessionStore } from '../../src/store/coding-sessions.ts';
import type { DatabaseSync } from '../../src/store/database.ts';
import { SessionLogs } from '../../src/store/session-logs.ts';
import { ScriptedHarness } from './scripted-harness.ts';
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
export function managerFixture(overrides: Record<string, unknown> = {}, existing?: { path: string; remove: () => void }): ManagerFixture {
  const dir = existing ?? tempDir();
  const workdir = join(dir.path, 'work');
  mkdirSync(workdir, { recursive: true });
  const { config } = loadConfig({ home: dir.path, env: {}, overrides: { workspaces: [dir.path], ...overrides } });
  const clock = new ManualClock();
  const harness = new ScriptedHarness('claude');
  const codex = new ScriptedHarness('codex', false);
  const { db, store, logs, manager } = sessionManagerIn(dir.path, config, clock, { claude: harness, codex, gemini: new ScriptedHarness('gemini', false) });
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
