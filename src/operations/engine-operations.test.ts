import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { EngineFixture } from '../../test/support/engine-fixture.ts';
import { chatMessage, engineFixture } from '../../test/support/engine-fixture.ts';
import type { StoreManagerFixture } from '../../test/support/manager-on-store.ts';
import { openManagerFixture } from '../../test/support/manager-on-store.ts';
import { ScriptedInference } from '../../test/support/scripted-inference.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import { silentLogger } from '../core/logger.ts';
import { NoProviderError } from '../inference/types.ts';
import { InboundCommandStore } from '../store/inbound-commands.ts';
import { runCommand } from './commands.ts';
import { createInboundHandler } from './inbound.ts';
import type { OperationServices } from './operation.ts';
import { rpcMethods } from './rpc-methods.ts';
import { OPERATIONS } from './table.ts';
import { createOperationsToolbox } from './toolbox.ts';

const chat = chatMessage;
const open = (path: string) => openTestStore(path);

describe('engine operations', { timeout: 30_000 }, () => {
  let m: StoreManagerFixture;
  let fx: EngineFixture;
  let services: OperationServices;
  beforeEach(async () => {
    m = await openManagerFixture(open);
    fx = await engineFixture({ open });
    services = { config: m.config, sessions: m.manager, clock: m.clock, engine: fx.engine };
  });
  afterEach(async () => {
    await fx.close();
    await m.close();
  });

  it('answers chat commands at once without a model, and queues everything else into the engine', async () => {
    const noModel = new ScriptedInference().onRequest(() => new NoProviderError());
    noModel.available = false;
    await fx.close();
    fx = await engineFixture({ inference: noModel, open });
    services.engine = fx.engine;
    const handle = createInboundHandler({
      ops: OPERATIONS,
      services,
      engine: fx.engine,
      outbox: fx.outbox,
      logger: silentLogger(),
    });
    await handle(chat('1', `/claude --name fixer --workdir ${m.workdir} fix the test`));
    assert.match(fx.outbox.to('telegram|42')[0] ?? '', /↩️ \[fixer\] Launched \(claude\)/);
    assert.equal(fx.outbox.deliveries[0]?.replyTo, '1');
    assert.equal((await m.manager.get('fixer')).originChannel, 'telegram|42');
    await handle(chat('2', '/claude_sessions'));
    assert.match(fx.outbox.to('telegram|42')[1] ?? '', /fixer/);
    assert.equal(fx.engine.listSessions().length, 0, 'commands create no engine session');
    await handle(chat('3', 'how is it going?'));
    await handle(chat('3', 'how is it going?'));
    await fx.engine.idle();
    assert.equal(fx.outbox.to('telegram|42')[2], 'No inference provider available.');
    assert.equal(fx.outbox.sent.length, 3, 'the redelivered message ran once');
    await handle(chat('4', '/unknown_command is just text'));
    await fx.engine.idle();
    assert.equal(fx.outbox.sent.length, 4);
  });

  it('runs a chat command redelivered after a crash at most once, and tells the user when a crash cut it off', async () => {
    const commands = new InboundCommandStore(m.db);
    const deps = {
      ops: OPERATIONS,
      services,
      engine: fx.engine,
      outbox: fx.outbox,
      logger: silentLogger(),
      commands,
      now: () => 1_000,
    };
    const handle = createInboundHandler(deps);
    await handle(chat('7', `/claude --name once --workdir ${m.workdir} do it`));
    await handle(chat('7', `/claude --name once --workdir ${m.workdir} do it`));
    assert.equal((await m.manager.list()).length, 1, 'the redelivered launch ran once');
    assert.equal(fx.outbox.to('telegram|42').length, 1, 'and was answered once');
    // A crash between starting the command and answering it: the record says "running".
    assert.equal(await commands.begin('telegram|42', '8', '/claude_kill once', 2_000), 'new');
    await createInboundHandler(deps)(chat('8', '/claude_kill once'));
    assert.equal((await m.manager.get('once')).status, 'starting', 'the cut-off command is not run again');
    assert.match(fx.outbox.to('telegram|42')[1] ?? '', /daemon restarted while it was running "\/claude_kill once"/);
    assert.equal(await commands.begin('telegram|42', '8', '/claude_kill once', 3_000), 'done');
  });

  it('lists engine sessions as a command, an RPC method and a tool, hiding other chats from chat callers', async () => {
    await fx.engine.acceptUserMessage(chat('1', 'hello', '42'));
    await fx.engine.acceptUserMessage(chat('2', 'hello', '99'));
    await fx.engine.postScheduled({ type: 'cron', id: 'nightly' }, 'run', 'cron:nightly');
    await fx.engine.idle();
    const listed = (await rpcMethods(OPERATIONS).get('engine.sessions')?.call({}, { kind: 'rpc' }, services)) as {
      count: number;
      nextCursor: string | null;
    };
    assert.deepEqual([listed.count, listed.nextCursor], [3, null]);
    // Paged newest first: two pages of two and one, each session once.
    const page1 = (await rpcMethods(OPERATIONS)
      .get('engine.sessions')
      ?.call({ limit: 2 }, { kind: 'rpc' }, services)) as {
      sessions: { id: string; createdAt: number }[];
      nextCursor: string | null;
    };
    const page2 = (await rpcMethods(OPERATIONS)
      .get('engine.sessions')
      ?.call({ limit: 2, cursor: page1.nextCursor }, { kind: 'rpc' }, services)) as {
      sessions: { id: string; createdAt: number }[];
      nextCursor: string | null;
    };
    const paged = [...page1.sessions, ...page2.sessions];
    assert.deepEqual(
      [page1.sessions.length, page2.sessions.length, new Set(paged.map((s) => s.id)).size, page2.nextCursor],
      [2, 1, 3, null],
    );
    assert.ok(paged.every((s, i) => i === 0 || (paged[i - 1] as { createdAt: number }).createdAt >= s.createdAt));
    const mine = await runCommand(
      OPERATIONS,
      '/agents',
      { kind: 'chat', channel: 'telegram|42', userId: '42' },
      services,
    );
    assert.match(mine ?? '', /user telegram\|42 \(42\)/);
    assert.match(mine ?? '', /cron nightly/);
    assert.doesNotMatch(mine ?? '', /telegram\|99/);
    assert.match(
      (await runCommand(
        OPERATIONS,
        '/agents cron',
        { kind: 'chat', channel: 'telegram|42', userId: '42' },
        services,
      )) ?? '',
      /^⚪ idle cron nightly/,
    );
    assert.match(
      (await runCommand(
        OPERATIONS,
        '/agents robots',
        { kind: 'chat', channel: 'telegram|42', userId: '42' },
        services,
      )) ?? '',
      /type: Invalid option/,
    );
    const withoutEngine = await runCommand(
      OPERATIONS,
      '/agents',
      { kind: 'chat', channel: 'telegram|42', userId: '42' },
      { config: m.config, sessions: m.manager, clock: m.clock },
    );
    assert.match(withoutEngine ?? '', /the agent engine is not running/);
  });

  it('starts a background agent and sends a session a message over RPC', async () => {
    const { sessionId: user } = await fx.engine.acceptUserMessage(chat('1', 'hello'));
    await fx.engine.idle();
    const methods = rpcMethods(OPERATIONS);
    const started = (await methods
      .get('engine.start')
      ?.call({ name: 'scout', prompt: 'look around', parent: user }, { kind: 'rpc' }, services)) as {
      sessionId: string;
    };
    await fx.engine.idle();
    assert.ok(fx.records(user).some((r) => r.type === 'incoming' && r.origin === 'subagent:scout'));
    const sent = (await methods
      .get('engine.send')
      ?.call({ session: started.sessionId, text: 'and report back' }, { kind: 'rpc' }, services)) as {
      sessionId: string;
    };
    assert.equal(sent.sessionId, started.sessionId);
    await fx.engine.idle();
    assert.ok(
      fx
        .records(started.sessionId)
        .some((r) => r.type === 'incoming' && r.origin === 'rpc' && r.text === 'and report back'),
    );
    await assert.rejects(
      methods.get('engine.send')?.call({ session: 'nope', text: 'x' }, { kind: 'rpc' }, services) ?? Promise.resolve(),
      /no engine session nope/,
    );
    await assert.rejects(
      methods.get('engine.start')?.call({ name: 'x' }, { kind: 'rpc' }, services) ?? Promise.resolve(),
      /prompt/,
    );
  });

  it('gives the orchestrator the table tools, run as the calling session with its chat as origin', async () => {
    const toolbox = createOperationsToolbox({ ops: OPERATIONS, services });
    const session = {
      id: 'eng-1',
      descriptor: { type: 'user' as const, connector: 'telegram', userId: '42', channelId: 'telegram|42' },
      channel: 'telegram|42',
    };
    const names = toolbox.tools(session).map((t) => t.name);
    assert.ok(names.includes('claude_launch') && names.includes('list_agents'));
    assert.ok(!names.includes('start_background_agent'), 'the engine adds its own tools');
    const launched = await toolbox.run(
      { id: 'c1', name: 'claude_launch', input: { prompt: 'p', workdir: m.workdir, name: 'viaagent' } },
      session,
    );
    assert.equal(launched.isError, false);
    assert.equal((await m.manager.get('viaagent')).originChannel, 'telegram|42');
    assert.equal((await m.manager.get('viaagent')).originSessionId, 'eng-1');
    const bad = await toolbox.run({ id: 'c2', name: 'claude_launch', input: { prompt: '' } }, session);
    assert.equal(bad.isError, true);
    assert.match(bad.text, /prompt/);
  });
});
