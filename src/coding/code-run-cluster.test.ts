// code_run's parts across nodes, over the fake Claude and a real SQLite file: the watchdog is armed by the node that
// runs a code_run session (whoever launched it: here a launch made straight through the SessionManager, as a claim of
// the cluster's queue makes it), a run given a CodeRunCluster launches and kills through it, and the tools' toolbox
// hands the engine turn's abort signal to the operation.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sessionManagerIn } from '../../test/support/session-manager-in.ts';
import { tempDir } from '../../test/support/temp-dir.ts';
import { waitFor } from '../../test/support/wait-for.ts';
import { ManualClock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import { loadConfig } from '../core/config-load.ts';
import { silentLogger } from '../core/logger.ts';
import { codeRunOperation } from '../operations/code-run.ts';
import { createOperationsToolbox } from '../operations/toolbox.ts';
import type { DatabaseSync } from '../store/database.ts';
import type { SessionLogs } from '../store/session-logs.ts';
import { CODE_RUN_OWNER, tripEndReason, tripOfEndReason } from './code-run-watchdog.ts';
import type { CodeRunCluster, CodeRunRequest } from './code-runner.ts';
import { CodeRunner } from './code-runner.ts';
import type { LaunchRequest, SessionManager } from './session-manager.ts';

const fake = (name: string): string => fileURLToPath(new URL(`../../test/support/${name}`, import.meta.url));

describe('tripEndReason / tripOfEndReason', () => {
  it('reads back the kind and description of a trip, and nothing from other reasons', () => {
    const reason = tripEndReason({ kind: 'total', limitMs: 3_000, runningMs: 3_000 });
    assert.deepEqual(tripOfEndReason(reason), { kind: 'total', detail: 'running for 3 s in total (limit 3 s)' });
    const tool = tripEndReason({ kind: 'tool', limitMs: 1_000, runningMs: 1_500, tool: 'Bash' });
    assert.equal(tripOfEndReason(tool)?.kind, 'tool');
    assert.equal(tripOfEndReason('killed by user'), null);
    assert.equal(tripOfEndReason(null), null);
  });
});

describe('code_run across nodes (the parts)', () => {
  const dir = tempDir('sb-coderun-cluster-');
  const work = join(dir.path, 'work');
  let config: Config;
  let clock: ManualClock;
  let db: DatabaseSync;
  let manager: SessionManager;
  let runner: CodeRunner;
  let logs: SessionLogs;

  before(() => {
    mkdirSync(work, { recursive: true });
    config = loadConfig({
      home: dir.path,
      env: {},
      overrides: {
        workspaces: [dir.path],
        defaultWorkdir: work,
        'timings.killGraceMs': 1_000,
        'harnesses.claude.executable': fake('fake-claude.mjs'),
        'harnesses.claude.settingSources': ['project'],
        'linear.codeRun.inactivitySec': 30,
        'linear.codeRun.timeoutSec': 600,
      },
    }).config;
    clock = new ManualClock();
    const parts = sessionManagerIn(dir.path, config, clock);
    db = parts.db;
    manager = parts.manager;
    logs = parts.logs;
    runner = new CodeRunner({ config, sessions: manager, logs, clock, logger: silentLogger() });
  });
  after(async () => {
    runner.watchdogs.stop();
    await manager.stop();
    db.close();
    dir.remove();
  });

  /** Waits until session `id`'s agent has reported its own session (it runs). */
  async function running(id: string): Promise<void> {
    await waitFor('the agent to start', async () => {
      const s = await manager.get(id);
      return s.backendSessionId !== null && s.status === 'running';
    });
  }

  it('the node running a code_run session arms its watchdog, whoever launched it', async () => {
    const session = await manager.launch({
      prompt: 'slow [[hang]]',
      originChannel: 'test',
      multiTurn: false,
      owner: CODE_RUN_OWNER,
      watchdog: { inactivityMs: 1_000_000, maxTotalMs: 4_000, toolTimeoutMs: 1_000_000 },
    });
    assert.equal(runner.watchdogs.watching, 1);
    await running(session.id);
    clock.advance(4_000);
    const ended = await waitFor('the watchdog to kill it', async () => {
      const s = await manager.get(session.id);
      return s.status === 'killed' ? s : undefined;
    });
    assert.deepEqual(tripOfEndReason(ended.endReason), {
      kind: 'total',
      detail: 'running for 4 s in total (limit 4 s)',
    });
    await waitFor('the watchdog disarmed', async () => runner.watchdogs.watching === 0);
  });

  it('leaves alone sessions without limits or of another owner', async () => {
    const plain = await manager.launch({ prompt: 'plain [[hang]]', originChannel: 'test' });
    const other = await manager.launch({
      prompt: 'other [[hang]]',
      originChannel: 'test',
      owner: 'linear-pipeline',
      watchdog: { inactivityMs: 1, maxTotalMs: 1, toolTimeoutMs: 1 },
    });
    assert.equal(runner.watchdogs.watching, 0);
    await manager.kill(plain.id);
    await manager.kill(other.id);
  });

  it('with a CodeRunCluster: launches through it, and an abort kills through it', async () => {
    const launched: LaunchRequest[] = [];
    const killed: string[] = [];
    let id = '';
    const cluster: CodeRunCluster = {
      launch: async (request) => {
        launched.push(request);
        const session = await manager.launch(request);
        id = session.id;
        return session.record;
      },
      kill: async (id) => {
        killed.push(id);
        await manager.kill(id, 'killed by user');
      },
    };
    const controller = new AbortController();
    const request: CodeRunRequest = { prompt: 'wait [[hang]]', originChannel: 'test', timeoutSec: 9 };
    const run = runner.run(request, controller.signal, cluster);
    await waitFor('the launch', async () => id !== '');
    const [asked] = launched;
    assert.equal(asked?.owner, CODE_RUN_OWNER);
    assert.deepEqual(asked?.watchdog, { inactivityMs: 30_000, maxTotalMs: 9_000, toolTimeoutMs: 600_000 });
    assert.equal(asked?.multiTurn, false);
    await running(id);
    controller.abort();
    const result = await run;
    assert.equal(result.error, 'stopped');
    assert.deepEqual(killed, [result.sessionId]);
  });

  it('with a CodeRunCluster: an abort while the launch waits in the queue drops it, and the call answers', async () => {
    let id = '';
    const cluster: CodeRunCluster = {
      launch: async (request) => {
        const record = await manager.enqueue(request, {});
        id = record.id;
        return record;
      },
      kill: async (sessionId) => {
        await manager.kill(sessionId);
      },
    };
    const controller = new AbortController();
    const run = runner.run({ prompt: 'never starts', originChannel: 'test' }, controller.signal, cluster);
    await waitFor('the launch queued', async () => id !== '' && (await manager.get(id)).status === 'queued');
    controller.abort();
    await waitFor('the queued launch dropped', async () => (await manager.get(id)).status === 'killed');
    // No record says a queued launch was dropped: the next read of its row ends the wait.
    clock.advance(2_000);
    const result = await run;
    assert.equal(result.error, 'stopped');
    assert.equal(result.sessionId, id);
  });

  it('with a CodeRunCluster: answers the output of a turn run to its end', async () => {
    const cluster: CodeRunCluster = {
      launch: async (request) => (await manager.launch(request)).record,
      kill: async () => assert.fail('nothing to kill'),
    };
    const result = await runner.run({ prompt: 'say hi', originChannel: 'test' }, undefined, cluster);
    assert.equal(result.success, true, JSON.stringify(result));
    assert.match(result.output, /FAKE CLAUDE REPLY to: say hi/);
  });

  it("a run naming no placement (a Linear mention's answer) is placed through the runner's own cluster", async () => {
    const launched: string[] = [];
    const cluster: CodeRunCluster = {
      launch: async (request) => {
        launched.push(request.prompt);
        return (await manager.launch(request)).record;
      },
      kill: async () => assert.fail('nothing to kill'),
    };
    const placed = new CodeRunner({
      config,
      sessions: manager,
      logs,
      clock,
      logger: silentLogger(),
      cluster: () => cluster,
    });
    try {
      const result = await placed.run({ prompt: 'answer the mention', originChannel: 'test' });
      assert.equal(result.success, true, JSON.stringify(result));
      assert.deepEqual(launched, ['answer the mention']);
    } finally {
      placed.watchdogs.stop();
    }
  });

  it("hands the engine turn's abort signal to code_run through the operations' toolbox", async () => {
    const seen: (AbortSignal | undefined)[] = [];
    const toolbox = createOperationsToolbox({
      ops: [codeRunOperation],
      services: {
        config,
        sessions: manager,
        clock,
        codeRunner: {
          run: async (request, signal) => {
            seen.push(signal);
            return { success: true, output: '', sessionId: 'x', harness: 'claude', harnessSource: 'default' };
          },
        },
      },
    });
    const controller = new AbortController();
    const outcome = await toolbox.run(
      { id: 'c1', name: 'code_run', input: { prompt: 'p' } },
      { id: 'engine-1', descriptor: { type: 'heartbeat' } },
      controller.signal,
    );
    assert.equal(outcome.isError, false, outcome.text);
    assert.equal(seen[0], controller.signal);
  });
});
