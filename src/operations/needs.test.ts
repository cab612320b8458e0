import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { ManagerFixture } from '../../test/support/manager-fixture.ts';
import { managerFixture } from '../../test/support/manager-fixture.ts';
import { RecordingEngine } from '../../test/support/recording-engine.ts';
import { AppError } from '../core/errors.ts';
import type { EngineControl } from '../engine/api.ts';
import { runCommand } from './commands.ts';
import { canRun, MISSING_SERVICE, servicesFor } from './needs.ts';
import type { OperationServices } from './operation.ts';
import { rpcMethods } from './rpc-methods.ts';
import { OPERATIONS } from './table.ts';
import { createOperationsToolbox } from './toolbox.ts';

/** An engine that is present and does nothing: only its presence matters here. */
function idleEngine(): EngineControl {
  return Object.assign(new RecordingEngine(), {
    listSessions: () => [],
    sessions: async () => [],
    sendFromSession: () => Promise.reject(new Error('not used')),
  });
}

describe('declared needs', () => {
  let f: ManagerFixture;
  let bare: OperationServices;
  beforeEach(() => {
    f = managerFixture();
    bare = { config: f.config, sessions: f.manager, clock: f.clock };
  });
  afterEach(async () => {
    await f.close();
  });

  it('answers every surface with one unavailable error naming the missing service', async () => {
    const rpc = rpcMethods(OPERATIONS).get('cron.list');
    await assert.rejects(
      rpc?.call({}, { kind: 'rpc' }, bare) ?? Promise.resolve(),
      (e: unknown) => e instanceof AppError && e.kind === 'unavailable' && e.message === MISSING_SERVICE.scheduler,
    );
    const reply = await runCommand(
      OPERATIONS,
      '/dispatches',
      { kind: 'chat', channel: 'telegram|1', userId: '1' },
      bare,
    );
    assert.match(reply ?? '', /^⚠️ the Linear integration is not running \(linear\.enabled is false\)/);
    // Input is still checked first: a bad input is reported as such, not as a missing service.
    await assert.rejects(
      rpcMethods(OPERATIONS).get('engine.start')?.call({ name: 'x' }, { kind: 'rpc' }, bare) ?? Promise.resolve(),
      /prompt/,
    );
  });

  it('offers the engine only the tools whose services run', () => {
    const session = { id: 'eng-1', descriptor: { type: 'heartbeat' as const } };
    const withoutEngine = createOperationsToolbox({ ops: OPERATIONS, services: bare })
      .tools(session)
      .map((t) => t.name);
    assert.ok(withoutEngine.includes('claude_launch'));
    for (const name of ['list_agents', 'spawn_agent', 'cron_add', 'code_run', 'linear_dispatches'])
      assert.ok(!withoutEngine.includes(name), name);
    const withEngine = createOperationsToolbox({ ops: OPERATIONS, services: { ...bare, engine: idleEngine() } })
      .tools(session)
      .map((t) => t.name);
    assert.ok(withEngine.includes('list_agents') && withEngine.includes('spawn_agent'));
    assert.ok(!withEngine.includes('cron_add'));
  });

  it('offers the orchestrator the tools that decide approvals only with approvals.agentMayDecide', () => {
    const session = { id: 'eng-1', descriptor: { type: 'heartbeat' as const } };
    const approvals = {} as NonNullable<OperationServices['approvals']>;
    const names = (agentMayDecide: boolean): string[] =>
      createOperationsToolbox({
        ops: OPERATIONS,
        services: { ...bare, approvals, config: { ...f.config, approvals: { ...f.config.approvals, agentMayDecide } } },
      })
        .tools(session)
        .map((t) => t.name);
    const decide = ['approve', 'deny', 'approval_rule_remove'];
    assert.ok(names(false).includes('approvals'), 'listing is always offered');
    for (const name of decide) assert.ok(!names(false).includes(name), name);
    for (const name of decide) assert.ok(names(true).includes(name), name);
  });

  it('narrows the services to what is needed, or names the first missing one', () => {
    const engine = idleEngine();
    assert.equal(servicesFor(['engine'], { ...bare, engine }).engine, engine);
    assert.throws(
      () => servicesFor(['engine', 'scheduler'], { ...bare, engine }),
      new RegExp(MISSING_SERVICE.scheduler.replace(/[()]/g, '\\$&')),
    );
    const agents = OPERATIONS.find((op) => op.name === 'agents');
    assert.ok(agents && !canRun(agents, bare) && canRun(agents, { ...bare, engine }));
  });
});
