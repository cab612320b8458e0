import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { EngineFixture, EngineFixtureOptions } from '../../test/support/engine-fixture.ts';
import { chatMessage, engineFixture } from '../../test/support/engine-fixture.ts';
import { Gate, ScriptedInference } from '../../test/support/scripted-inference.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import type { InboundMessage } from '../channels/connector.ts';
import { InferenceError, NoProviderError } from '../inference/types.ts';

/** An engine fixture over the test's database (SQLite, or PostgreSQL with TEST_DATABASE=postgres). */
const engineOnStore = (options: EngineFixtureOptions = {}): Promise<EngineFixture> =>
  engineFixture({ ...options, open: (path) => openTestStore(path) });

let fx: EngineFixture | null = null;
afterEach(async () => {
  await fx?.close();
  fx = null;
});

/** A message in chat `chatId` (default 42) from user 42 unless `userId` says otherwise. */
const chat = (id: string, text: string, chatId = '42', userId = '42'): InboundMessage =>
  chatMessage(id, text, chatId, userId);

describe('engine: user sessions', { timeout: 30_000 }, () => {
  it('answers in the same channel, replying to the message, and logs the turn incrementally', async () => {
    fx = await engineOnStore();
    const accepted = await fx.engine.acceptUserMessage(chat('m1', 'hello'));
    assert.equal(accepted.duplicate, false);
    await fx.engine.idle();
    assert.deepEqual(fx.outbox.deliveries, [
      { target: { channel: 'telegram', chat: '42' }, to: 'telegram|42', text: 'echo: hello', replyTo: 'm1' },
    ]);
    const records = fx.records(accepted.sessionId);
    assert.deepEqual(
      records.map((r) => r.type),
      ['session_created', 'incoming', 'turn_start', 'assistant', 'outgoing', 'turn_end'],
    );
    assert.deepEqual(records[0]?.descriptor, {
      type: 'user',
      connector: 'telegram',
      userId: '42',
      channelId: 'telegram|42',
    });
    assert.deepEqual(records[1], {
      ...records[1],
      messageId: 'm1',
      kind: 'user',
      origin: 'telegram|42',
      text: 'hello',
      from: '42',
      replyTo: 'm1',
    });
    assert.equal(records[5]?.outcome, 'ok');
    const request = fx.inference.requests[0];
    assert.match(request?.system ?? '', /orchestrator/);
    assert.ok(request?.tools.some((t) => t.name === 'spawn_agent'));
    assert.ok(request?.tools.some((t) => t.name === 'lookup'));
  });

  it('appends engine.systemPrompt to the built-in prompts', async () => {
    fx = await engineOnStore({ overrides: { engine: { systemPrompt: 'Always answer in French.' } } });
    await fx.engine.acceptUserMessage(chat('m1', 'hello'));
    await fx.engine.postScheduled({ type: 'heartbeat' }, 'checks', 'heartbeat');
    await fx.engine.idle();
    const [user, heartbeat] = [
      fx.inference.requests.find((r) => r.system.includes('orchestrator')),
      fx.inference.requests.find((r) => r.system.includes('This is the heartbeat session')),
    ];
    assert.ok(user?.system.endsWith('Always answer in French.'));
    assert.ok(heartbeat?.system.startsWith('You are a background agent'));
    assert.ok(heartbeat?.system.endsWith('Always answer in French.'));
  });

  it('maps the same conversation to the same session, and other users or chats to their own', async () => {
    fx = await engineOnStore();
    const a = await fx.engine.acceptUserMessage(chat('1', 'a'));
    const b = await fx.engine.acceptUserMessage(chat('2', 'b'));
    const c = await fx.engine.acceptUserMessage(chat('3', 'c', '42', '7'));
    const d = await fx.engine.acceptUserMessage(chat('4', 'd', '43'));
    assert.equal(a.sessionId, b.sessionId);
    assert.notEqual(a.sessionId, c.sessionId);
    assert.notEqual(a.sessionId, d.sessionId);
    await fx.engine.idle();
  });

  it('runs one session strictly in order, one message per turn, while other sessions run concurrently', async () => {
    const inference = new ScriptedInference();
    const first = new Gate();
    inference.onRequest((req) => (req.messages.at(-1)?.content === 'a1' ? first : undefined));
    fx = await engineOnStore({ inference });
    await fx.engine.acceptUserMessage(chat('a1', 'a1', '1'));
    await fx.engine.acceptUserMessage(chat('a2', 'a2', '1'));
    await fx.engine.acceptUserMessage(chat('b1', 'b1', '2'));
    await first.reached();
    // Session 2 gets its turn while session 1's first turn is still waiting for the model.
    await fx.outbox.waitFor(1);
    assert.deepEqual(
      fx.outbox.sent.map((m) => m.text),
      ['echo: b1'],
    );
    assert.equal(fx.inference.requests.filter((r) => r.messages.at(-1)?.content === 'a2').length, 0);
    first.release({ text: 'reply a1' });
    await fx.engine.idle();
    assert.deepEqual(fx.outbox.to('telegram|1'), ['reply a1', 'echo: a2']);
    // The second turn sees the first one as history.
    const a2 = fx.inference.requests.find((r) => r.messages.at(-1)?.content === 'a2');
    assert.deepEqual(
      a2?.messages.map((m) => [m.role, m.content]),
      [
        ['user', 'a1'],
        ['assistant', 'reply a1'],
        ['user', 'a2'],
      ],
    );
  });

  it('treats a repeated caller-chosen id of a scheduled or system post as a duplicate, also after a restart', async () => {
    fx = await engineOnStore();
    const first = await fx.engine.postScheduled({ type: 'cron', id: 'nightly' }, 'run the report', 'cron', {
      messageId: 'cron-nightly-1',
    });
    assert.equal(first.duplicate, false);
    assert.equal(first.messageId, 'cron-nightly-1');
    await fx.engine.idle();
    fx = await fx.reopen();
    const again = await fx.engine.postScheduled({ type: 'cron', id: 'nightly' }, 'run the report', 'cron', {
      messageId: 'cron-nightly-1',
    });
    assert.equal(again.duplicate, true);
    assert.equal(again.sessionId, first.sessionId);
    const route = { sessionId: first.sessionId };
    const sys = await fx.engine.postSystemMessage(route, 'wake up', 'wake', { messageId: 'wake-7' });
    assert.equal(sys?.duplicate, false);
    assert.equal(
      (await fx.engine.postSystemMessage(route, 'wake up', 'wake', { messageId: 'wake-7' }))?.duplicate,
      true,
    );
    await assert.rejects(
      fx.engine.postSystemMessage(route, 'x', 'wake', { messageId: ' ' }),
      /messageId must not be empty/,
    );
  });

  it('acknowledges a redelivered message id without queueing it twice, also after a restart', async () => {
    fx = await engineOnStore();
    const [one, two] = await Promise.all([
      fx.engine.acceptUserMessage(chat('m1', 'hi')),
      fx.engine.acceptUserMessage(chat('m1', 'hi')),
    ]);
    assert.equal(one.duplicate, false);
    assert.equal(two.duplicate, true);
    assert.equal(two.sessionId, one.sessionId);
    await fx.engine.idle();
    assert.equal((await fx.engine.acceptUserMessage(chat('m1', 'hi'))).duplicate, true);
    // A crash before the index flush: the ids come back from the log's tail.
    fx = await fx.reopen();
    assert.equal((await fx.engine.acceptUserMessage(chat('m1', 'hi'))).duplicate, true);
    // After a flush they come from the index.
    fx.clock.advance(fx.config.engine.indexFlushMs);
    fx = await fx.reopen();
    assert.equal((await fx.engine.acceptUserMessage(chat('m1', 'hi'))).duplicate, true);
    const fresh = await fx.engine.acceptUserMessage(chat('m2', 'again'));
    assert.equal(fresh.duplicate, false);
    await fx.engine.idle();
    assert.deepEqual(
      fx.outbox.sent.map((m) => m.text),
      ['echo: again'],
    );
    assert.equal(fx.records(one.sessionId).filter((r) => r.type === 'incoming').length, 2);
  });

  it('rejects a message without text or sender, naming the field', async () => {
    fx = await engineOnStore();
    await assert.rejects(fx.engine.acceptUserMessage(chat('m1', '   ')), /text: the message has no text/);
    await assert.rejects(fx.engine.acceptUserMessage({ ...chat('m1', 'x'), userId: '' }), /userId/);
  });
});

describe('engine: failures and limits', { timeout: 30_000 }, () => {
  it('says "Inference failed." when every provider failed, and records it', async () => {
    fx = await engineOnStore({
      inference: new ScriptedInference().script(new InferenceError('all failed', ['a: 500'])),
    });
    const { sessionId } = await fx.engine.acceptUserMessage(chat('m1', 'hi'));
    await fx.engine.idle();
    assert.deepEqual(
      fx.outbox.sent.map((m) => m.text),
      ['Inference failed.'],
    );
    const end = fx.records(sessionId).at(-1);
    assert.equal(end?.type, 'turn_end');
    assert.equal(end?.outcome, 'error');
    assert.ok(fx.records(sessionId).some((r) => r.type === 'outgoing' && r.text === 'Inference failed.'));
  });

  it('says "No inference provider available." when none is configured', async () => {
    fx = await engineOnStore({ inference: new ScriptedInference().script(new NoProviderError()) });
    await fx.engine.acceptUserMessage(chat('m1', 'hi'));
    await fx.engine.idle();
    assert.deepEqual(
      fx.outbox.sent.map((m) => m.text),
      ['No inference provider available.'],
    );
  });

  it('says "Inference failed." when the model finishes with an error', async () => {
    fx = await engineOnStore({ inference: new ScriptedInference().script({ text: '', finishReason: 'error' }) });
    await fx.engine.acceptUserMessage(chat('m1', 'hi'));
    await fx.engine.idle();
    assert.deepEqual(
      fx.outbox.sent.map((m) => m.text),
      ['Inference failed.'],
    );
  });

  it('stops after engine.maxToolIterations model calls with "Tool execution limit reached."', async () => {
    const inference = new ScriptedInference().onRequest(() => ({
      toolCalls: [{ id: `c${Math.random()}`, name: 'lookup', input: { word: 'x' } }],
    }));
    fx = await engineOnStore({ inference, overrides: { engine: { maxToolIterations: 3 } } });
    const { sessionId } = await fx.engine.acceptUserMessage(chat('m1', 'loop'));
    await fx.engine.idle();
    assert.equal(fx.inference.requests.length, 3);
    assert.equal(fx.toolbox.calls.length, 3);
    assert.deepEqual(
      fx.outbox.sent.map((m) => m.text),
      ['Tool execution limit reached.'],
    );
    assert.equal(fx.records(sessionId).at(-1)?.outcome, 'limit');
  });

  it('returns a failing tool, an unknown tool and bad input to the model as error results and goes on', async () => {
    const inference = new ScriptedInference().script(
      {
        text: 'Working on it.',
        toolCalls: [
          { id: 't1', name: 'explode', input: {} },
          { id: 't2', name: 'no_such_tool', input: {} },
          { id: 't3', name: 'spawn_agent', input: { prompt: '' } },
          { id: 't4', name: 'lookup', input: 'not an object' },
        ],
      },
      { text: 'Done despite errors.' },
    );
    fx = await engineOnStore({ inference });
    const { sessionId } = await fx.engine.acceptUserMessage(chat('m1', 'go'));
    await fx.engine.idle();
    const second = fx.inference.requests[1];
    const results = second?.messages.filter((m) => m.role === 'tool') ?? [];
    assert.deepEqual(
      results.map((m) => (m.role === 'tool' ? [m.toolCallId, m.isError] : [])),
      [
        ['t1', true],
        ['t2', true],
        ['t3', true],
        ['t4', true],
      ],
    );
    const texts = results.map((m) => m.content);
    assert.match(texts[0] ?? '', /the tool blew up/);
    assert.match(texts[1] ?? '', /Unknown tool no_such_tool/);
    assert.match(texts[2] ?? '', /prompt: the prompt must not be empty/);
    assert.match(texts[3] ?? '', /must be an object/);
    assert.deepEqual(
      fx.outbox.sent.map((m) => m.text),
      ['Working on it.', 'Done despite errors.'],
    );
    assert.equal(fx.records(sessionId).filter((r) => r.type === 'tool_result').length, 4);
    assert.equal(fx.records(sessionId).at(-1)?.outcome, 'ok');
  });

  it('records a background session failure without sending anything', async () => {
    fx = await engineOnStore({ inference: new ScriptedInference().script(new InferenceError('down', [])) });
    const { sessionId } = await fx.engine.postScheduled(
      { type: 'cron', id: 'nightly' },
      'run the nightly checks',
      'cron:nightly',
    );
    await fx.engine.idle();
    assert.equal(fx.outbox.sent.length, 0);
    const end = fx.records(sessionId).at(-1);
    assert.equal(end?.outcome, 'error');
    assert.match(String(end?.error), /Inference failed/);
    assert.ok(fx.logs.some((l) => l.msg === 'engine turn ended: Inference failed.'));
  });
});
