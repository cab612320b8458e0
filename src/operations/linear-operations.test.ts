import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { EngineFixture } from '../../test/support/engine-fixture.ts';
import { engineFixture } from '../../test/support/engine-fixture.ts';
import type { StoreManagerFixture } from '../../test/support/manager-on-store.ts';
import { openManagerFixture } from '../../test/support/manager-on-store.ts';
import { ScriptedInference } from '../../test/support/scripted-inference.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import type { CodeRunRequest, CodeRunResult } from '../coding/code-runner.ts';
import { loadConfig } from '../core/config-load.ts';
import { transitionDispatch } from '../linear/pipeline/dispatch-transitions.ts';
import type { DispatchStatus } from '../store/linear-dispatch-types.ts';
import { DispatchStore } from '../store/linear-dispatches.ts';
import { PlanningStore } from '../store/linear-planning.ts';
import { runCommand } from './commands.ts';
import type { OperationServices } from './operation.ts';
import { rpcMethods } from './rpc-methods.ts';
import { OPERATIONS } from './table.ts';
import { runTool } from './tools.ts';

const open = (path: string) => openTestStore(path);

describe('Linear and agent operations', { timeout: 30_000 }, () => {
  let m: StoreManagerFixture;
  let fx: EngineFixture;
  let inference: ScriptedInference;
  let services: OperationServices;
  const runs: CodeRunRequest[] = [];

  beforeEach(async () => {
    m = await openManagerFixture(open);
    inference = new ScriptedInference();
    fx = await engineFixture({ inference, open });
    const config = loadConfig({
      home: m.home,
      env: {},
      overrides: {
        workspaces: [m.home],
        defaultWorkdir: m.workdir,
        'linear.profiles': { qa: { instructions: 'You are the QA lead.', harness: 'gemini' } },
      },
    }).config;
    runs.length = 0;
    const codeRunner = {
      run: async (request: CodeRunRequest): Promise<CodeRunResult> => {
        runs.push(request);
        return request.prompt.includes('hang')
          ? {
              success: false,
              output: 'partial',
              error: 'inactivity_timeout',
              detail: 'no activity for 120 s (limit 120 s)',
              sessionId: 's1',
              harness: 'claude',
              harnessSource: 'default',
            }
          : {
              success: true,
              output: 'done it',
              sessionId: 's2',
              harness: request.harness ?? 'claude',
              harnessSource: 'explicit',
            };
      },
    };
    services = { config, sessions: m.manager, clock: m.clock, engine: fx.engine, codeRunner };
  });
  afterEach(async () => {
    await fx.close();
    await m.close();
  });

  it('code_run answers {success, output, error?} and uses the calling agent’s profile', async () => {
    const ok = await runTool(
      OPERATIONS,
      'code_run',
      { prompt: 'fix it', harness: 'codex', timeout_sec: 30 },
      { kind: 'rpc' },
      services,
    );
    assert.equal(ok.isError, false);
    assert.deepEqual(JSON.parse(ok.text), { success: true, output: 'done it', session: 's2', harness: 'codex' });
    assert.equal(runs[0]?.timeoutSec, 30);
    assert.equal(runs[0]?.workdir, m.workdir);
    const failed = await runTool(OPERATIONS, 'code_run', { prompt: 'hang' }, { kind: 'rpc' }, services);
    assert.deepEqual(JSON.parse(failed.text), {
      success: false,
      output: 'partial',
      error: 'inactivity_timeout',
      detail: 'no activity for 120 s (limit 120 s)',
      session: 's1',
      harness: 'claude',
    });
    // An agent started as the qa profile calls code_run: its profile decides the backend.
    const { sessionId } = await fx.engine.startBackgroundAgent({ prompt: 'hello', name: 'qa' });
    await runTool(OPERATIONS, 'code_run', { prompt: 'test it' }, { kind: 'agent', sessionId }, services);
    assert.equal(runs[2]?.profile, 'qa');
    assert.equal(runs[2]?.originSessionId, sessionId);
    const none = await runTool(
      OPERATIONS,
      'code_run',
      { prompt: 'x' },
      { kind: 'rpc' },
      { config: services.config, sessions: m.manager, clock: m.clock },
    );
    assert.deepEqual(none, { text: 'code_run is not available in this daemon', isError: true });
    assert.match(
      (await runTool(OPERATIONS, 'code_run', { prompt: '' }, { kind: 'rpc' }, services)).text,
      /prompt: the prompt must not be empty/,
    );
  });

  it('spawn_agent starts a profile’s agent with its instructions; ask_agent waits for the reply', async () => {
    const spawned = await runTool(
      OPERATIONS,
      'spawn_agent',
      { agent: 'qa', message: 'Review PR 12' },
      { kind: 'rpc' },
      services,
    );
    assert.match(spawned.text, /Started agent "qa" \(session \w+\)/);
    await fx.engine.idle();
    const first = inference.requests[0]?.messages.find((mm) => mm.role === 'user');
    assert.ok(first && first.role === 'user');
    assert.match(first.content, /You are the QA lead\.\n\nReview PR 12/);
    inference.script({ text: 'Looks good to me.' });
    const asked = await runTool(
      OPERATIONS,
      'ask_agent',
      { message: 'Is PR 12 ready?', timeout_sec: 60 },
      { kind: 'rpc' },
      services,
    );
    assert.deepEqual(asked, { text: 'Looks good to me.', isError: false });
    const unknown = await runTool(
      OPERATIONS,
      'ask_agent',
      { agent: 'nobody', message: 'hi' },
      { kind: 'rpc' },
      services,
    );
    assert.equal(unknown.isError, true);
    assert.match(unknown.text, /agent: no agent profile "nobody" \(known: qa\)/);
  });

  it('linear_dispatches lists the pipeline and the projects in planning mode (tool, command, RPC)', async () => {
    const unavailable = await runTool(OPERATIONS, 'linear_dispatches', {}, { kind: 'rpc' }, services);
    assert.match(unavailable.text, /the Linear integration is not running/);
    const store = new DispatchStore(m.db);
    const add = async (n: number, identifier: string, status: DispatchStatus) => {
      const { record } = await store.insert({
        id: `d${n}`,
        issueId: `i${n}`,
        identifier,
        title: `Title ${n}`,
        agentSessionId: null,
        tier: 'medior',
        tierReason: 'estimate 2',
        harness: 'claude',
        model: 'sonnet',
        auditHarness: 'claude',
        auditModel: null,
        profile: null,
        repoPath: '/repo',
        branch: `b${n}`,
        context: {},
        createdAt: m.clock.now(),
      });
      if (status !== 'queued') {
        await transitionDispatch(store, record.id, 'queued', 'dispatched', m.clock.now());
        if (status === 'stuck')
          await transitionDispatch(store, record.id, 'dispatched', 'stuck', m.clock.now(), {
            patch: { lastError: 'audit failed 3 times' },
          });
      }
    };
    await add(1, 'ENG-1', 'queued');
    await add(2, 'ENG-2', 'stuck');
    const planning = new PlanningStore(m.db);
    await planning.create(
      {
        id: 'p1',
        projectId: 'proj',
        projectName: 'Launch',
        issueId: 'i9',
        issueIdentifier: 'ENG-9',
        teamId: 't',
        agentSessionId: null,
        createdBy: null,
      },
      1,
    );
    services.linear = {
      pipeline: { list: (s) => store.list(s), get: (ref) => store.get(ref) },
      planner: { store: planning },
    };
    const all = await runTool(OPERATIONS, 'linear_dispatches', {}, { kind: 'rpc' }, services);
    // Newest first (same creation time: the later id first).
    assert.match(
      all.text,
      /^🛑 ENG-2 Title 2 — stuck, attempt 1, medior \(claude sonnet\), updated .* ago — audit failed 3 times\n⏳ ENG-1 Title 1 — queued, attempt 1, medior \(claude sonnet\), updated .* ago\n📝 Planning Launch on ENG-9 — interviewing, 0 turns$/,
    );
    const first = (await rpcMethods(OPERATIONS)
      .get('linear.dispatches')
      ?.call({ limit: 1 }, { kind: 'rpc' }, services)) as {
      dispatches: { issue: string }[];
      nextCursor: string | null;
    };
    assert.deepEqual(
      first.dispatches.map((d) => d.issue),
      ['ENG-2'],
    );
    const second = (await rpcMethods(OPERATIONS)
      .get('linear.dispatches')
      ?.call({ limit: 1, cursor: first.nextCursor }, { kind: 'rpc' }, services)) as {
      dispatches: { issue: string }[];
      nextCursor: string | null;
    };
    assert.deepEqual([second.dispatches.map((d) => d.issue), second.nextCursor], [['ENG-1'], null]);
    assert.match(
      (await runCommand(
        OPERATIONS,
        '/dispatches active',
        { kind: 'chat', channel: 'telegram|1', userId: '1' },
        services,
      )) ?? '',
      /^⏳ ENG-1[^\n]*\n📝/,
    );
    const rpc = (await rpcMethods(OPERATIONS)
      .get('linear.dispatches')
      ?.call({ status: 'stuck' }, { kind: 'rpc' }, services)) as { dispatches: { issue: string }[] };
    assert.deepEqual(
      rpc.dispatches.map((d) => d.issue),
      ['ENG-2'],
    );
    assert.match(
      (await runTool(OPERATIONS, 'linear_dispatches', { status: 'nope' }, { kind: 'rpc' }, services)).text,
      /status: Invalid option/,
    );
  });
});
