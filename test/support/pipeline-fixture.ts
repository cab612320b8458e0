// A Linear pipeline over real parts: SQLite and session logs in a temp dir, a real git repository, a SessionManager
// whose harnesses run the fake agent executables (or scripted harnesses for fine control), the in-memory LinearApi and
// a recording notifier. Time is a ManualClock; tests wait for real processes with `waitFor` (wait-for.ts) (no timed assertions).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Harness } from '../../src/coding/harness.ts';
import { createHarnesses } from '../../src/coding/harnesses.ts';
import type { SessionManager } from '../../src/coding/session-manager.ts';
import { ManualClock } from '../../src/core/clock.ts';
import type { Config, HarnessName } from '../../src/core/config.ts';
import { loadConfig } from '../../src/core/config-load.ts';
import { silentLogger } from '../../src/core/logger.ts';
import type { Pipeline } from '../../src/linear/pipeline/pipeline.ts';
import { createPipeline } from '../../src/linear/pipeline/pipeline.ts';
import type { PipelineDeps } from '../../src/linear/pipeline/types.ts';
import type { PipelineNotifier } from '../../src/linear/pipeline/types.ts';
import type { StoredSession } from '../../src/store/coding-session-types.ts';
import type { CodingSessionStore } from '../../src/store/coding-sessions.ts';
import type { DatabaseSync } from '../../src/store/database.ts';
import { sqliteKysely } from '../../src/store/kysely/connection.ts';
import { DispatchStore } from '../../src/store/linear-dispatches.ts';
import type { SessionLogs } from '../../src/store/session-logs.ts';
import { FakeLinearApi } from './fake-linear-api.ts';
import { initRepo } from './git-repo.ts';
import { ScriptedHarness } from './scripted-harness.ts';
import { sessionManagerIn } from './session-manager-in.ts';
import { tempDir } from './temp-dir.ts';

const FAKE_CLAUDE = fileURLToPath(new URL('./fake-claude.mjs', import.meta.url));
const FAKE_GEMINI = fileURLToPath(new URL('./fake-gemini.mjs', import.meta.url));
const FAKE_CODEX = fileURLToPath(new URL('./fake-codex.mjs', import.meta.url));

/**
 * The prompts.yaml the e2e tests put in the repository: the auditor replays a captured verdict chosen by the issue's
 * team key and the attempt (test/fixtures/agent-streams/pipeline-audit-<TEAM>-<attempt>.jsonl), so each scenario
 * decides what the audits say; the worker keeps the default prompts (directives in the issue description steer it).
 */
export const REPLAY_PROMPTS =
  'audit:\n  task: "Audit {{identifier}} (attempt {{attempt}}). [[replay:pipeline-audit-{{teamKey}}-{{attempt}}]]"\n';

/** Records what the pipeline tells the user's chat channel. */
export class RecordingNotifier implements PipelineNotifier {
  readonly texts: string[] = [];
  notify(text: string): void {
    this.texts.push(text);
  }
}

export interface PipelineFixtureOptions {
  /** Dotted config overrides. */
  overrides?: Record<string, unknown>;
  /** Content of `<repo>/.switchboard/prompts.yaml`; null for none. Default REPLAY_PROMPTS. */
  prompts?: string | null;
  /** Scripted harnesses instead of the fake executables. */
  scripted?: boolean;
}

export interface PipelineFixture {
  home: string;
  repo: string;
  agentLog: string;
  config: Config;
  clock: ManualClock;
  db: DatabaseSync;
  sessionStore: CodingSessionStore;
  dispatches: DispatchStore;
  logs: SessionLogs;
  harnesses: Record<HarnessName, Harness>;
  manager: SessionManager;
  linear: FakeLinearApi;
  notifier: RecordingNotifier;
  pipeline: Pipeline;
  /** What the pipeline was built from (to build a second instance over the same parts). */
  deps: PipelineDeps;
  /** The scripted harness of a name (scripted fixtures only). */
  scripted(name: HarnessName): ScriptedHarness;
  /** Every fake-agent invocation so far: argv, cwd, env subset. */
  invocations(): { harness: string; argv: string[]; cwd: string }[];
  /** The coding sessions of a dispatch (worker and audit, in launch order) with their phase. */
  sessionsOf(
    dispatchId: string,
  ): Promise<(StoredSession & { phase: 'worker' | 'audit'; attempt: number; try: number })[]>;
  /**
   * Simulates a kill -9 of the daemon: the agent processes die without anything being announced (as the OS would
   * take them), the pipeline is dropped without stop(); then a new SessionManager (restore() marks the cut sessions
   * interrupted) and a new started Pipeline over the same files. The Linear fake and notifier carry over.
   */
  crash(): Promise<PipelineFixture>;
  close(): Promise<void>;
}

interface Shared {
  dir: { path: string; remove: () => void };
  linear: FakeLinearApi;
  notifier: RecordingNotifier;
  closers: (() => Promise<void> | void)[];
}

/** Builds a started pipeline fixture (see the file comment). */
export async function pipelineFixture(options: PipelineFixtureOptions = {}, shared?: Shared): Promise<PipelineFixture> {
  const dir = shared?.dir ?? tempDir('sb-pipe-');
  const repo = join(dir.path, 'repo');
  const agentLog = join(dir.path, 'agents.jsonl');
  if (!shared) {
    initRepo(repo);
    if (options.prompts !== null) {
      mkdirSync(join(repo, '.switchboard'), { recursive: true });
      writeFileSync(join(repo, '.switchboard', 'prompts.yaml'), options.prompts ?? REPLAY_PROMPTS);
    }
  }
  const { config } = loadConfig({
    home: dir.path,
    env: {},
    overrides: {
      workspaces: [dir.path],
      'timings.killGraceMs': 2_000,
      'harnesses.claude.executable': FAKE_CLAUDE,
      'harnesses.claude.settingSources': ['project'],
      'harnesses.claude.env': { FAKE_AGENT_LOG: agentLog },
      'harnesses.gemini.executable': FAKE_GEMINI,
      'harnesses.gemini.env': { FAKE_AGENT_LOG: agentLog },
      'harnesses.codex.executable': FAKE_CODEX,
      'harnesses.codex.env': { FAKE_AGENT_LOG: agentLog, CODEX_HOME: join(dir.path, 'codex-home') },
      'linear.pipeline.repo': repo,
      ...options.overrides,
    },
  });
  const clock = new ManualClock();
  const scripted: Partial<Record<HarnessName, ScriptedHarness>> = {};
  const script = (name: HarnessName): ScriptedHarness =>
    (scripted[name] ??= new ScriptedHarness(name, name === 'claude'));
  const harnesses: Record<HarnessName, Harness> = options.scripted
    ? { claude: script('claude'), codex: script('codex'), gemini: script('gemini') }
    : createHarnesses(config, silentLogger());
  const { db, store: sessionStore, logs, manager } = sessionManagerIn(dir.path, config, clock, harnesses);
  await manager.restore();
  const linear = shared?.linear ?? new FakeLinearApi();
  const notifier = shared?.notifier ?? new RecordingNotifier();
  const deps: PipelineDeps = {
    config,
    clock,
    logger: silentLogger(),
    db: sqliteKysely(db),
    sessions: manager,
    logs,
    linear,
    notifier,
  };
  const pipeline = createPipeline(deps);
  await pipeline.start();
  const state: Shared = shared ?? { dir, linear, notifier, closers: [] };
  state.closers.push(async () => {
    await pipeline.stop();
    await manager.stop();
    db.close();
  });
  const fixture: PipelineFixture = {
    home: dir.path,
    repo,
    agentLog,
    config,
    clock,
    db,
    sessionStore,
    dispatches: new DispatchStore(sqliteKysely(db)),
    logs,
    harnesses,
    manager,
    linear,
    notifier,
    pipeline,
    deps,
    scripted: (name) => {
      const harness = scripted[name];
      if (!harness) throw new Error(`no scripted ${name} harness in this fixture`);
      return harness;
    },
    invocations: () =>
      existsSync(agentLog)
        ? readFileSync(agentLog, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as { harness: string; argv: string[]; cwd: string })
        : [],
    sessionsOf: async (dispatchId) =>
      Promise.all(
        (await new DispatchStore(sqliteKysely(db)).sessions(dispatchId)).map(async (row) => ({
          ...(await manager.get(row.sessionId)),
          phase: row.phase,
          attempt: row.attempt,
          try: row.try,
        })),
      ),
    async crash() {
      // The dropped pipeline keeps its listener on this manager, which will announce nothing more: shutdown() ends
      // every running session silently (as a dead daemon would), and this clock is never advanced again.
      await manager.stop();
      return pipelineFixture(options, state);
    },
    async close() {
      // Newest first: a crash() fixture's pipeline and manager before those of the fixture it replaced, each awaited
      // (nothing writes into the folder once its closer resolves) before the folder is removed.
      for (const close of state.closers.reverse()) await close();
      state.closers.length = 0;
      dir.remove();
    },
  };
  return fixture;
}
