// The fake Linear server (real @linear/sdk client over HTTP on 127.0.0.1), a LinearApi built over it the way the
// daemon builds it, a database in a temp dir (SQLite, or what `open` opens) and a scripted model: what the router, triage and planner tests share.
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import type { Clock } from '../../src/core/clock.ts';
import { systemClock } from '../../src/core/clock.ts';
import type { Config } from '../../src/core/config.ts';
import type { LinearConfig } from '../../src/core/config-linear.ts';
import { loadConfig } from '../../src/core/config-load.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { buildLinearAccess } from '../../src/linear/api/access.ts';
import type { LinearApi } from '../../src/linear/api/types.ts';
import type { Database } from '../../src/store/tables/index.ts';
import type { FakeLinear } from './fake-linear.ts';
import { startFakeLinear } from './fake-linear.ts';
import { ScriptedInference } from './scripted-inference.ts';
import { tempDir } from './temp-dir.ts';
import type { OpenStore } from './test-store.ts';
import { openSqliteStore } from './test-store.ts';

export interface LinearGlueFixture {
  fake: FakeLinear;
  api: LinearApi;
  /** The whole daemon config (the `linear` overrides applied). */
  full: Config;
  config: LinearConfig;
  /** The database (a SQLite file, or what `open` opened). */
  db: Kysely<Database>;
  dir: string;
  inference: ScriptedInference;
  clock: Clock;
  /** Comments the app posted on an issue, oldest first. */
  appComments(issueId: string): { id: string; body: string; parentId: string | null }[];
  /** Activities posted to an agent session (content objects). */
  activities(agentSessionId: string): Record<string, unknown>[];
  close(): Promise<void>;
}

/**
 * Starts a fake Linear and builds the API over it with a personal API key. `linear` holds dotted overrides of the
 * `linear` section (`{ 'triage.enabled': false }`), `overrides` dotted overrides of the whole config.
 */
export async function linearGlueFixture(
  linear: Record<string, unknown> = {},
  clock: Clock = systemClock(),
  overrides: Record<string, unknown> = {},
  /** Opens the database for `<dir>/state.db` (`(path) => openTestStore(path)` for both databases); default SQLite. */
  open: OpenStore = openSqliteStore,
): Promise<LinearGlueFixture> {
  const fake = await startFakeLinear();
  const dir = tempDir('sb-linear-');
  const full = loadConfig({
    home: dir.path,
    env: {},
    overrides: {
      workspaces: [dir.path],
      'linear.apiUrl': fake.graphqlUrl,
      'linear.apiKey': 'lin_api_fake',
      'linear.requests': { backoffInitialMs: 1, backoffMaxMs: 4, maxAttempts: 2 },
      ...Object.fromEntries(Object.entries(linear).map(([k, v]) => [`linear.${k}`, v])),
      ...overrides,
    },
  }).config;
  const config = full.linear;
  const store = await open(join(dir.path, 'state.db'));
  const db = store.db;
  const access = buildLinearAccess({
    config,
    gateway: { host: '127.0.0.1', port: 1 },
    env: {},
    db,
    clock,
    logger: silentLogger(),
  });
  return {
    fake,
    api: access.api,
    full,
    config,
    db,
    dir: dir.path,
    inference: new ScriptedInference(),
    clock,
    appComments: (issueId) =>
      [...fake.workspace.comments.values()]
        .filter((c) => c.issueId === issueId && c.userId === fake.workspace.appUser.id)
        .map((c) => ({ id: c.id, body: c.body, parentId: c.parentId })),
    activities: (agentSessionId) =>
      fake.workspace.agentSessions.get(agentSessionId)?.activities.map((a) => a.content) ?? [],
    async close() {
      await store.close();
      await fake.close();
      dir.remove();
    },
  };
}
