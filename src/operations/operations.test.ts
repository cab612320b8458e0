import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { managerPerTest } from '../../test/support/manager-fixture.ts';
import { configSchema } from '../core/config.ts';
import { agentRequest } from './agent-orchestration.ts';
import { parseCommandArgs, runCommand, tokenize } from './commands.ts';
import { parseOperationInput } from './input.ts';
import { launchOperation } from './launch.ts';
import type { Caller, OperationServices } from './operation.ts';
import { resolveOriginChannel } from './origin.ts';
import { respondOperation } from './respond.ts';
import { resumeOperation } from './resume.ts';
import { rpcMethods } from './rpc-methods.ts';
import { OPERATIONS } from './table.ts';
import { runTool, toolDefinitions } from './tools.ts';

const chat: Caller = { kind: 'chat', channel: 'telegram|42', userId: '42' };
const agent: Caller = { kind: 'agent', sessionId: 'eng-1', channel: 'telegram|42' };

describe('operations table', () => {
  it('exposes the seed tool names, commands and RPC methods from one table', async () => {
    assert.deepEqual(
      toolDefinitions(OPERATIONS).map((t) => t.name),
      [
        'claude_launch',
        'claude_respond',
        'claude_output',
        'claude_fg',
        'claude_bg',
        'claude_kill',
        'claude_sessions',
        'claude_stats',
        'claude_resume',
        'claude_diff',
        'list_agents',
        'send_session_message',
        'cron_add',
        'cron_list',
        'cron_remove',
        'cron_enable',
        'cron_disable',
        'heartbeat_add',
        'heartbeat_list',
        'heartbeat_remove',
        'scheduler_status',
        'code_run',
        'spawn_agent',
        'ask_agent',
        'linear_dispatches',
        'approvals',
        'approve',
        'deny',
        'approval_rules',
        'approval_rule_remove',
        'claude_pr',
        'cluster_nodes',
      ],
    );
    assert.deepEqual(OPERATIONS.flatMap((o) => (o.expose.command ? [`/${o.expose.command.name}`] : [])).sort(), [
      '/agents',
      '/approval_rule_remove',
      '/approval_rules',
      '/approvals',
      '/approve',
      '/claude',
      '/claude_bg',
      '/claude_diff',
      '/claude_fg',
      '/claude_kill',
      '/claude_pr',
      '/claude_respond',
      '/claude_resume',
      '/claude_sessions',
      '/claude_stats',
      '/cron_add',
      '/cron_disable',
      '/cron_enable',
      '/cron_list',
      '/cron_remove',
      '/deny',
      '/dispatches',
      '/heartbeat_add',
      '/heartbeat_list',
      '/heartbeat_remove',
      '/heartbeat_run',
      '/nodes',
      '/scheduler_status',
    ]);
    assert.deepEqual([...rpcMethods(OPERATIONS).keys()].sort(), [
      'agents.ask',
      'agents.spawn',
      'approvals.approve',
      'approvals.decide',
      'approvals.deny',
      'approvals.list',
      'approvals.removeRule',
      'approvals.rules',
      'claude-code.kill',
      'claude-code.launch',
      'claude-code.output',
      'claude-code.sessions',
      'claude-code.stats',
      'code.run',
      'cron.add',
      'cron.disable',
      'cron.enable',
      'cron.list',
      'cron.remove',
      'engine.send',
      'engine.sessions',
      'engine.start',
      'heartbeat.add',
      'heartbeat.list',
      'heartbeat.remove',
      'heartbeat.run',
      'linear.dispatches',
      'nodes.list',
      'scheduler.status',
      'sessions.diff',
      'sessions.get',
      'sessions.kill',
      'sessions.launch',
      'sessions.list',
      'sessions.output',
      'sessions.pr',
      'sessions.resume',
      'sessions.send',
      'sessions.stats',
    ]);
  });

  it('gives tools snake_case JSON schemas with a harness parameter', async () => {
    const launch = toolDefinitions(OPERATIONS).find((t) => t.name === 'claude_launch');
    const props = launch?.inputSchema.properties as Record<string, { enum?: string[] }>;
    assert.deepEqual(props.harness?.enum, ['claude', 'codex', 'gemini']);
    for (const key of [
      'prompt',
      'max_budget_usd',
      'resume_session_id',
      'multi_turn_disabled',
      'system_prompt',
      'allowed_tools',
    ])
      assert.ok(key in props, key);
    assert.deepEqual(launch?.inputSchema.required, ['prompt']);
  });

  it('accepts snake_case, camelCase and aliases, and names the field in errors', async () => {
    assert.deepEqual(
      parseOperationInput(launchOperation as never, { prompt: 'x', max_budget_usd: 2, originChannel: 'slack|c' }),
      {
        prompt: 'x',
        maxBudgetUsd: 2,
        channel: 'slack|c',
      },
    );
    assert.throws(
      () => parseOperationInput(launchOperation, { prompt: 'x', max_budget_usd: 'two' }),
      /max_budget_usd: .*number/,
    );
    assert.throws(() => parseOperationInput(launchOperation, { prompt: '' }), /prompt: the prompt must not be empty/);
    assert.throws(() => parseOperationInput(launchOperation, { prompt: 'x', budget: 1 }), /unknown parameter budget/);
    // Left out, a parameter is said to be required (not "expected string, received undefined").
    assert.throws(
      () => parseOperationInput(launchOperation, { max_budget_usd: 2 }),
      (error: Error & { field?: string }) => {
        assert.equal(error.message, 'launch: prompt: required (string)');
        assert.equal(error.field, 'prompt');
        return true;
      },
    );
    assert.throws(() => parseOperationInput(launchOperation, ['x']), /parameters must be an object/);
    assert.throws(() => parseOperationInput(respondOperation, { id: 'a', session: 'b', message: 'm' }), /given twice/);
  });

  it('treats constructor, toString and __proto__ as unknown parameters, never as inherited aliases', async () => {
    for (const name of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
      const raw = JSON.parse(`{"prompt": "x", "${name}": 1}`) as Record<string, unknown>;
      assert.throws(
        () => parseOperationInput(launchOperation, raw),
        (error: Error & { field?: string }) => {
          assert.match(error.message, new RegExp(`^launch: unknown parameter ${name} \\(accepted: prompt,`));
          assert.equal(error.field, name);
          return true;
        },
      );
    }
    // An own-property alias table still works, and a name that is an inherited member of it is not an alias.
    assert.deepEqual(
      parseOperationInput(respondOperation as never, { id: 'a', message: 'm' }),
      parseOperationInput(respondOperation as never, { session: 'a', message: 'm' }),
    );
    assert.equal(
      Object.getPrototypeOf(parseOperationInput(launchOperation as never, JSON.parse('{"prompt": "x"}'))),
      Object.prototype,
    );
  });

  it('names no agent profile after an inherited member (agents.spawn agent: "constructor")', async () => {
    const config = configSchema.parse({});
    for (const name of ['constructor', 'toString', '__proto__']) {
      assert.throws(() => agentRequest(config, name, 'hi'), new RegExp(`^AppError: agent: no agent profile "${name}"`));
    }
  });

  it('parses chat command syntax: flags, positionals, rest of line, quotes', async () => {
    assert.deepEqual(
      tokenize(`a "b c" 'd'`).map((t) => t.text),
      ['a', 'b c', 'd'],
    );
    assert.deepEqual(parseCommandArgs(launchOperation as never, '--name fixer --harness codex fix the  "flaky" test'), {
      name: 'fixer',
      harness: 'codex',
      prompt: 'fix the  "flaky" test',
    });
    assert.deepEqual(parseCommandArgs(respondOperation as never, '--interrupt my-task please stop'), {
      interrupt: true,
      session: 'my-task',
      message: 'please stop',
    });
    assert.deepEqual(parseCommandArgs(resumeOperation as never, '--fork my-task try again'), {
      fork: true,
      session: 'my-task',
      prompt: 'try again',
    });
    assert.deepEqual(parseCommandArgs(resumeOperation as never, '--list'), { list: true });
    assert.throws(() => parseCommandArgs(launchOperation, '--nope x'), /unknown option --nope/);
    assert.deepEqual(parseCommandArgs(respondOperation as never, '--no-interrupt my-task go'), {
      interrupt: false,
      session: 'my-task',
      message: 'go',
    });
    assert.throws(() => parseCommandArgs(launchOperation, '--no-name x'), /only a yes\/no option can be negated/);
    // A bare `--` ends the options; a quoted one is text.
    assert.deepEqual(parseCommandArgs(launchOperation as never, '--name fixer -- --help me with --name'), {
      name: 'fixer',
      prompt: '--help me with --name',
    });
    assert.deepEqual(parseCommandArgs(respondOperation as never, '-- my-task --interrupt is a word'), {
      session: 'my-task',
      message: '--interrupt is a word',
    });
    assert.deepEqual(parseCommandArgs(launchOperation as never, '"--" is a dash dash'), {
      prompt: '"--" is a dash dash',
    });
  });

  it('resolves origin channels in the seed order', async () => {
    const config = { agentChannels: { '/src': 'telegram|1', '/src/app': 'telegram|2' }, fallbackChannel: 'slack|ops' };
    assert.equal(
      resolveOriginChannel(config, { explicit: 'discord|9', callerChannel: 'telegram|42', workdir: '/src/app' }),
      'discord|9',
    );
    assert.equal(resolveOriginChannel(config, { callerChannel: 'telegram|42', workdir: '/src/app' }), 'telegram|42');
    assert.equal(resolveOriginChannel(config, { workdir: '/src/app/lib' }), 'telegram|2');
    assert.equal(resolveOriginChannel(config, { workdir: '/elsewhere' }), 'slack|ops');
    assert.equal(resolveOriginChannel({ agentChannels: {} }, {}), 'unknown');
  });
});

describe('operations over a session manager', () => {
  const { f } = managerPerTest();
  let services: OperationServices;
  beforeEach(() => {
    services = { config: f.config, sessions: f.manager, clock: f.clock };
  });

  it('launches from a chat command with the caller channel as origin', async () => {
    const reply = await runCommand(
      OPERATIONS,
      `/claude --name fixer --workdir ${f.workdir} fix the test`,
      chat,
      services,
    );
    assert.match(reply ?? '', /↩️ \[fixer\] Launched \(claude\)/);
    assert.equal((await f.manager.get('fixer')).originChannel, 'telegram|42');
    assert.equal(await runCommand(OPERATIONS, 'hello there', chat, services), null);
    assert.match(
      (await runCommand(OPERATIONS, '/claude_kill', chat, services)) ?? '',
      /session: .*Usage: \/claude_kill/s,
    );
  });

  it('counts agent responds and lets userInitiated reset them; tool errors are results, not throws', async () => {
    const launched = await runTool(OPERATIONS, 'claude_launch', { prompt: 'p', workdir: f.workdir }, agent, services);
    assert.equal(launched.isError, false);
    const record = (await f.manager.list())[0];
    assert.equal(record?.originSessionId, 'eng-1');
    await f.harness.last.emit({ type: 'started', backendSessionId: 'b' });
    for (let i = 0; i < 10; i += 1)
      await runTool(OPERATIONS, 'claude_respond', { session: record?.name, message: `m${i}` }, agent, services);
    const refused = await runTool(
      OPERATIONS,
      'claude_respond',
      { session: record?.name, message: 'again' },
      agent,
      services,
    );
    assert.equal(refused.isError, true);
    assert.match(refused.text, /auto-respond limit reached/);
    const user = await runTool(
      OPERATIONS,
      'claude_respond',
      { session: record?.name, message: 'ok', userInitiated: true },
      agent,
      services,
    );
    assert.equal(user.isError, false);
    const bad = await runTool(OPERATIONS, 'claude_output', { session: 'nope' }, agent, services);
    assert.deepEqual(bad, {
      text: 'no session "nope" (give a session id, name, or the agent\'s own session id)',
      isError: true,
    });
  });

  it('foreground shows the last blocks, background saves the offset, foreground again catches up', async () => {
    await runCommand(OPERATIONS, `/claude --name w --workdir ${f.workdir} go`, chat, services);
    const run = f.harness.last;
    await run.emit(
      { type: 'started', backendSessionId: 'b' },
      { type: 'text', text: 'one' },
      { type: 'text', text: 'two' },
    );
    const fg = await runCommand(OPERATIONS, '/claude_fg w', chat, services);
    assert.match(fg ?? '', /last 2 outputs:\none\ntwo\n\nStreaming new output/);
    assert.deepEqual((await f.manager.get('w')).foreground['telegram|42']?.on, true);
    await run.emit({ type: 'text', text: 'three' });
    assert.match((await runCommand(OPERATIONS, '/claude_bg', chat, services)) ?? '', /Moved to background: w/);
    await run.emit({ type: 'text', text: 'four' }, { type: 'text', text: 'five' });
    const again = await runCommand(OPERATIONS, '/claude_fg w', chat, services);
    assert.match(again ?? '', /📋 Catchup \(2 missed outputs\):\nfour\nfive/);
    const rpcFg = await runTool(OPERATIONS, 'claude_fg', { session: 'w' }, { kind: 'rpc' }, services);
    assert.match(rpcFg.text, /channel: foreground needs a chat channel/);
  });

  it('answers the seed-compatible RPC shapes', async () => {
    const methods = rpcMethods(OPERATIONS);
    const launched = (await methods
      .get('claude-code.launch')
      ?.call(
        { prompt: 'hi', workdir: f.workdir, max_budget_usd: 1, originChannel: 'telegram|7' },
        { kind: 'rpc' },
        services,
      )) as Record<string, unknown>;
    assert.deepEqual(Object.keys(launched).sort(), ['harness', 'id', 'model', 'name', 'status', 'workdir']);
    assert.equal((await f.manager.get(launched.id as string)).originChannel, 'telegram|7');
    assert.equal((await f.manager.get(launched.id as string)).spec.maxBudgetUsd, 1);
    await f.harness.last.emit({ type: 'started', backendSessionId: 'claude-uuid' }, { type: 'text', text: 'hello' });
    const listed = (await methods.get('claude-code.sessions')?.call({}, { kind: 'rpc' }, services)) as {
      count: number;
      sessions: Record<string, unknown>[];
    };
    assert.equal(listed.count, 1);
    assert.equal(listed.sessions[0]?.claudeSessionId, 'claude-uuid');
    const output = (await methods
      .get('claude-code.output')
      ?.call({ id: 'claude-uuid' }, { kind: 'rpc' }, services)) as Record<string, unknown>;
    assert.deepEqual(output.lines, ['hello']);
    assert.equal(output.lineCount, 1);
    const killed = (await methods
      .get('claude-code.kill')
      ?.call({ session: launched.name }, { kind: 'rpc' }, services)) as Record<string, unknown>;
    assert.equal(killed.status, 'killed');
    const stats = (await methods.get('claude-code.stats')?.call({}, { kind: 'rpc' }, services)) as Record<
      string,
      unknown
    >;
    assert.deepEqual(stats.sessionsByStatus, { completed: 0, failed: 0, killed: 1, running: 0 });
    assert.equal(typeof stats.display, 'string');
  });
});
