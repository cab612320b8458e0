import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { StoreManagerParts } from '../../test/support/session-manager-on.ts';
import { sessionManagerOn } from '../../test/support/session-manager-on.ts';
import { tempDir } from '../../test/support/temp-dir.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import { waitFor } from '../../test/support/wait-for.ts';
import { ManualClock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import { loadConfig } from '../core/config-load.ts';
import { silentLogger } from '../core/logger.ts';
import { CodingSessionStore } from '../store/coding-sessions.ts';
import type { SessionLogs } from '../store/session-logs.ts';
import type { CodeRunResult } from './code-runner.ts';
import { CodeRunner, resolveCodeRunHarness } from './code-runner.ts';
import type { SessionManager } from './session-manager.ts';

const fake = (name: string): string => fileURLToPath(new URL(`../../test/support/${name}`, import.meta.url));

/** Resolves once session `id` has logged its agent's exit. */
function exitLogged(logs: SessionLogs, id: string): Promise<void> {
  return new Promise((resolve) => {
    if (logs.read(id).some((r) => r.type === 'exited')) return resolve();
    const off = logs.subscribe(id, (record) => {
      if (record.type !== 'exited') return;
      off();
      resolve();
    });
  });
}

/** A store whose final session status commits only a macrotask after the agent's exit was logged (a busy pool's). */
class LateEndedRows extends CodingSessionStore {
  readonly order: string[] = [];
  logs: SessionLogs | undefined;
  override async update(...args: Parameters<CodingSessionStore['update']>): Promise<void> {
    const [id, patch] = args;
    if (!this.logs || (patch.status !== 'completed' && patch.status !== 'failed' && patch.status !== 'killed'))
      return super.update(...args);
    await exitLogged(this.logs, id);
    await new Promise((resolve) => setImmediate(resolve));
    await super.update(...args);
    this.order.push(`row ${patch.status}`);
  }
}

describe('resolveCodeRunHarness', () => {
  const config = (harness?: 'codex') => ({
    defaultHarness: 'claude' as const,
    linear: { codeRun: harness ? { harness } : {} },
  });
  it('takes the explicit backend, then the profile, then linear.codeRun.harness, then defaultHarness', async () => {
    assert.deepEqual(resolveCodeRunHarness(config('codex'), 'gemini', { harness: 'codex' }), {
      harness: 'gemini',
      source: 'explicit',
    });
    assert.deepEqual(resolveCodeRunHarness(config('codex'), undefined, { harness: 'gemini' }), {
      harness: 'gemini',
      source: 'profile',
    });
    assert.deepEqual(resolveCodeRunHarness(config('codex'), undefined, {}), { harness: 'codex', source: 'config' });
    assert.deepEqual(resolveCodeRunHarness(config(), undefined, undefined), { harness: 'claude', source: 'default' });
  });
});

/** The config of a CodeRunner over the fake agents in `home`. */
function runnerConfig(home: string, work: string): Config {
  return loadConfig({
    home,
    env: {},
    overrides: {
      workspaces: [home],
      defaultWorkdir: work,
      'timings.killGraceMs': 1_000,
      'harnesses.claude.executable': fake('fake-claude.mjs'),
      'harnesses.claude.settingSources': ['project'],
      'harnesses.gemini.executable': fake('fake-gemini.mjs'),
      'harnesses.codex.executable': fake('fake-codex.mjs'),
      'harnesses.codex.env': { CODEX_HOME: join(home, 'codex-home') },
      'linear.codeRun.inactivitySec': 30,
      'linear.codeRun.timeoutSec': 600,
      'linear.profiles': { reviewer: { harness: 'gemini' } },
    },
  }).config;
}

describe('CodeRunner over the fake agents', () => {
  const dir = tempDir('sb-coderun-');
  const work = join(dir.path, 'work');
  let config: Config;
  let clock: ManualClock;
  let parts: StoreManagerParts;
  let manager: SessionManager;
  let runner: CodeRunner;

  before(async () => {
    mkdirSync(work, { recursive: true });
    config = runnerConfig(dir.path, work);
    clock = new ManualClock();
    parts = await sessionManagerOn(dir.path, config, clock, (path) => openTestStore(path));
    manager = parts.manager;
    const logs = parts.logs;
    runner = new CodeRunner({ config, sessions: manager, logs, clock, logger: silentLogger() });
  });
  after(async () => {
    await parts.close();
    dir.remove();
  });

  /** Waits until the newest run's agent process has reported its session (so the watchdog watches a live agent). */
  async function started(run: Promise<CodeRunResult>): Promise<{ run: Promise<CodeRunResult> }> {
    await waitFor('the agent to start', async () =>
      (await manager.list()).some((s) => s.backendSessionId !== null && s.status === 'running'),
    );
    return { run };
  }

  it('returns the output of a successful turn', async () => {
    const result = await runner.run({ prompt: 'say hello', originChannel: 'test' });
    assert.equal(result.success, true, JSON.stringify(result));
    assert.equal(result.error, undefined);
    assert.equal(result.harness, 'claude');
    assert.equal(result.harnessSource, 'default');
    assert.match(result.output, /FAKE CLAUDE REPLY to: say hello/);
    assert.equal((await manager.get(result.sessionId)).status, 'completed', 'the run is a listed coding session');
  });

  it('reports `exit N` when the CLI crashes (claude through the SDK, gemini and codex as CLIs)', async () => {
    for (const harness of ['claude', 'gemini', 'codex'] as const) {
      const result = await runner.run({ prompt: 'work [[crash]]', harness, originChannel: 'test' });
      assert.equal(result.success, false, harness);
      assert.equal(result.error, 'exit 3', `${harness}: ${JSON.stringify(result)}`);
    }
  });

  it('uses the calling profile’s backend', async () => {
    const result = await runner.run({ prompt: 'review', profile: 'reviewer', originChannel: 'test' });
    assert.equal(result.harness, 'gemini');
    assert.equal(result.harnessSource, 'profile');
    assert.match(result.output, /FAKE GEMINI REPLY/);
    await assert.rejects(
      runner.run({ prompt: 'x', profile: 'nobody', originChannel: 'test' }),
      /no agent profile "nobody"/,
    );
  });

  it('kills a silent agent after the inactivity limit: `inactivity_timeout`', async () => {
    const { run } = await started(runner.run({ prompt: 'think [[hang]]', originChannel: 'test', inactivitySec: 5 }));
    clock.advance(5_000);
    const result = await run;
    assert.equal(result.success, false);
    assert.equal(result.error, 'inactivity_timeout');
    assert.match(result.detail ?? '', /no activity for 5 s/);
    assert.equal((await manager.get(result.sessionId)).status, 'killed');
  });

  it('kills a run past its wall-clock limit even while it is busy: `timeout`', async () => {
    const { run } = await started(
      runner.run({ prompt: 'slow [[sleep:60000]]', originChannel: 'test', timeoutSec: 3, inactivitySec: 1_000 }),
    );
    clock.advance(3_000);
    const result = await run;
    assert.equal(result.error, 'timeout');
    assert.match(result.detail ?? '', /limit 3 s/);
  });

  it('stops a run when its signal aborts', async () => {
    const controller = new AbortController();
    const { run } = await started(runner.run({ prompt: 'wait [[hang]]', originChannel: 'test' }, controller.signal));
    controller.abort();
    const result = await run;
    assert.equal(result.error, 'stopped');
  });
});

describe('CodeRunner answers once its session is stored', () => {
  it('a run that ended answers only after its row committed: the list says what the answer says', async () => {
    const dir = tempDir('sb-coderun-late-');
    const work = join(dir.path, 'work');
    mkdirSync(work, { recursive: true });
    const config = runnerConfig(dir.path, work);
    const clock = new ManualClock();
    let store: LateEndedRows | undefined;
    const parts = await sessionManagerOn(dir.path, config, clock, (path) => openTestStore(path), {
      store: (db) => (store = new LateEndedRows(db)),
    });
    try {
      assert.ok(store);
      store.logs = parts.logs;
      const runner = new CodeRunner({
        config,
        sessions: parts.manager,
        logs: parts.logs,
        clock,
        logger: silentLogger(),
      });
      const result = await runner.run({ prompt: 'say hello', originChannel: 'test' });
      store.order.push('answered');
      assert.equal(result.success, true, JSON.stringify(result));
      assert.deepEqual(store.order, ['row completed', 'answered']);
      const listed = (await parts.manager.list()).find((s) => s.id === result.sessionId);
      assert.equal(listed?.status, 'completed');
    } finally {
      await parts.close();
      dir.remove();
    }
  });
});
