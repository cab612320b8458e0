import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { EngineFixture, EngineFixtureOptions } from '../../test/support/engine-fixture.ts';
import { chatMessage, engineFixture, isSubagentRequest } from '../../test/support/engine-fixture.ts';
import { Gate, ScriptedInference } from '../../test/support/scripted-inference.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import type { InferenceRequest } from '../inference/types.ts';
import { InferenceError } from '../inference/types.ts';

/** An engine fixture over the test's database (SQLite, or PostgreSQL with TEST_DATABASE=postgres). */
const engineOnStore = (options: EngineFixtureOptions = {}): Promise<EngineFixture> =>
  engineFixture({ ...options, open: (path) => openTestStore(path) });

let fx: EngineFixture | null = null;
afterEach(async () => {
  await fx?.close();
  fx = null;
});

const chat = chatMessage;

const lastContent = (req: InferenceRequest): string => req.messages.at(-1)?.content ?? '';
const isSubagent = isSubagentRequest;

describe('engine: subagents', { timeout: 30_000 }, () => {
  it('spawn_agent returns at once; the subagent reply reaches the parent, which answers its user', async () => {
    const inference = new ScriptedInference().onRequest((req) => {
      if (lastContent(req) === 'audit the repo')
        return {
          toolCalls: [{ id: 'c1', name: 'spawn_agent', input: { prompt: 'check the tests', name: 'auditor' } }],
        };
      if (req.messages.at(-1)?.role === 'tool') return { text: 'Started an auditor.' };
      if (isSubagent(req)) return { text: 'All 12 tests pass.' };
      return undefined;
    });
    fx = await engineOnStore({ inference });
    const { sessionId: parentId } = await fx.engine.acceptUserMessage(chat('m1', 'audit the repo'));
    await fx.engine.idle();
    const sub = fx.engine.listSessions().find((s) => s.descriptor.type === 'subagent');
    assert.deepEqual(sub?.descriptor, { type: 'subagent', id: sub?.id, parentSessionId: parentId, name: 'auditor' });
    const toolResult = fx.inference.requests[1]?.messages.at(-1);
    assert.match(toolResult?.content ?? '', new RegExp(`session ${sub?.id}`));
    // The subagent's task, then its reply delivered to the parent as a system message, answered to the user's chat.
    const subRequest = fx.inference.requests.find(isSubagent);
    assert.equal(
      lastContent(subRequest as InferenceRequest),
      `<system_message origin="parent:${parentId}">check the tests</system_message>`,
    );
    assert.deepEqual(fx.outbox.to('telegram|42'), [
      'Started an auditor.',
      '<system_message origin="subagent:auditor">All 12 tests pass.</system_message>'.replace(/^/, 'echo: '),
    ]);
    // A system message gets no replyTo.
    assert.equal(fx.outbox.deliveries[1]?.replyTo, undefined);
    const parentRecords = fx.records(parentId).filter((r) => r.type === 'incoming');
    assert.deepEqual(parentRecords.at(-1), {
      ...parentRecords.at(-1),
      kind: 'system',
      origin: 'subagent:auditor',
      text: 'All 12 tests pass.',
    });
  });

  it('tells the parent when a subagent fails', async () => {
    const inference = new ScriptedInference().onRequest((req) =>
      isSubagent(req) ? new InferenceError('down', []) : { text: 'noted' },
    );
    fx = await engineOnStore({ inference });
    const { sessionId: parentId } = await fx.engine.acceptUserMessage(chat('m1', 'hi'));
    await fx.engine.idle();
    await fx.engine.startBackgroundAgent({ prompt: 'do it', name: 'worker', parentSessionId: parentId });
    await fx.engine.idle();
    const delivered = fx
      .records(parentId)
      .filter((r) => r.type === 'incoming')
      .at(-1);
    assert.equal(delivered?.origin, 'subagent:worker');
    assert.match(String(delivered?.text), /Background agent "worker" \(session \w+\) failed: Inference failed\./);
  });

  it('askAgent resolves with the first reply, which then does not go to the parent', async () => {
    const inference = new ScriptedInference().onRequest((req) =>
      isSubagent(req) ? { text: 'the answer is 42' } : undefined,
    );
    fx = await engineOnStore({ inference });
    const { sessionId: parentId } = await fx.engine.acceptUserMessage(chat('m1', 'hi'));
    await fx.engine.idle();
    const answer = await fx.engine.askAgent({ prompt: 'what is it?', name: 'oracle', parentSessionId: parentId });
    assert.equal(answer.text, 'the answer is 42');
    await fx.engine.idle();
    assert.equal(fx.records(parentId).filter((r) => r.type === 'incoming').length, 1);
    assert.ok(fx.records(answer.sessionId).some((r) => r.type === 'outgoing' && r.target === 'ask'));
  });

  it('askAgent rejects after its timeout; the late reply then goes to the parent', async () => {
    const gate = new Gate();
    const inference = new ScriptedInference().onRequest((req) => (isSubagent(req) ? gate : undefined));
    fx = await engineOnStore({ inference });
    const { sessionId: parentId } = await fx.engine.acceptUserMessage(chat('m1', 'hi'));
    await fx.engine.idle();
    const asked = fx.engine.askAgent({
      prompt: 'slow question',
      name: 'slow',
      parentSessionId: parentId,
      timeoutMs: 5_000,
    });
    await gate.reached();
    fx.clock.advance(5_000);
    await assert.rejects(asked, /no reply from agent "slow"/);
    gate.release({ text: 'late answer' });
    await fx.engine.idle();
    const delivered = fx
      .records(parentId)
      .filter((r) => r.type === 'incoming')
      .at(-1);
    assert.equal(delivered?.text, 'late answer');
  });

  it('a subagent without a given parent belongs to the most recent user session', async () => {
    fx = await engineOnStore();
    const { sessionId: userId } = await fx.engine.acceptUserMessage(chat('m1', 'hi'));
    await fx.engine.idle();
    const { sessionId } = await fx.engine.startBackgroundAgent({ prompt: 'x', name: 'orphan' });
    const sub = fx.engine.listSessions().find((s) => s.id === sessionId);
    assert.equal(sub?.descriptor.type === 'subagent' && sub.descriptor.parentSessionId, userId);
    await fx.engine.idle();
    await assert.rejects(
      fx.engine.startBackgroundAgent({ prompt: 'x', name: 'y', parentSessionId: 'nope' }),
      /parentSessionId: no engine session nope/,
    );
  });
});

describe('engine: send_session_message and routing', { timeout: 30_000 }, () => {
  it('defaults to the parent for a subagent and to the most recent user session for others', async () => {
    const inference = new ScriptedInference().onRequest((req) => {
      const last = lastContent(req);
      if (req.messages.at(-1)?.role === 'tool') return { text: 'sent' };
      if (last.includes('report up'))
        return { toolCalls: [{ id: 's1', name: 'send_session_message', input: { text: 'progress: half done' } }] };
      if (last.includes('tell the user'))
        return { toolCalls: [{ id: 's2', name: 'send_session_message', input: { text: 'nightly run finished' } }] };
      return { text: 'ok' };
    });
    fx = await engineOnStore({ inference });
    const { sessionId: older } = await fx.engine.acceptUserMessage(chat('m1', 'first user', '1'));
    fx.clock.advance(1_000);
    const { sessionId: newer } = await fx.engine.acceptUserMessage(chat('m2', 'second user', '2'));
    await fx.engine.idle();
    const { sessionId: subId } = await fx.engine.startBackgroundAgent({
      prompt: 'report up',
      name: 'reporter',
      parentSessionId: older,
    });
    await fx.engine.idle();
    const olderIncoming = fx.records(older).filter((r) => r.type === 'incoming');
    assert.ok(olderIncoming.some((r) => r.origin === 'subagent:reporter' && r.text === 'progress: half done'));
    await fx.engine.postScheduled({ type: 'cron', id: 'nightly' }, 'tell the user', 'cron:nightly');
    await fx.engine.idle();
    const newerIncoming = fx.records(newer).filter((r) => r.type === 'incoming');
    assert.ok(newerIncoming.some((r) => r.origin === 'cron:nightly' && r.text === 'nightly run finished'));
    assert.ok(subId);
  });

  it('sends to an explicit session id and refuses unknown ids and a session messaging itself', async () => {
    const inference = new ScriptedInference();
    fx = await engineOnStore({ inference });
    const { sessionId: a } = await fx.engine.acceptUserMessage(chat('m1', 'a', '1'));
    const { sessionId: b } = await fx.engine.acceptUserMessage(chat('m2', 'b', '2'));
    await fx.engine.idle();
    inference.script(
      {
        toolCalls: [
          { id: 'x1', name: 'send_session_message', input: { text: 'to b', session_id: b } },
          { id: 'x2', name: 'send_session_message', input: { text: 'to nobody', session_id: 'missing' } },
          { id: 'x3', name: 'send_session_message', input: { text: 'to me', sessionId: a } },
        ],
      },
      { text: 'done' },
    );
    await fx.engine.acceptUserMessage(chat('m3', 'send things', '1'));
    await fx.engine.idle();
    const results = fx.inference.requests.find(
      (r) => r.messages.at(-1)?.role === 'tool' && r.messages.some((m) => m.content === 'send things'),
    );
    const tool = results?.messages.filter((m) => m.role === 'tool').map((m) => m.content) ?? [];
    assert.match(tool[0] ?? '', new RegExp(`delivered to session ${b}`));
    assert.match(tool[1] ?? '', /session_id: no engine session missing/);
    assert.match(tool[2] ?? '', /cannot message itself/);
    assert.ok(fx.records(b).some((r) => r.type === 'incoming' && r.text === 'to b' && r.origin === `session:${a}`));
  });

  it('resolves most-recent-foreground by the last user message and heartbeat to the heartbeat session', async () => {
    fx = await engineOnStore();
    assert.equal(
      await fx.engine.postSystemMessage({ strategies: ['most-recent-foreground', 'heartbeat'] }, 'wake', 'wake'),
      null,
    );
    const hb = await fx.engine.postScheduled({ type: 'heartbeat' }, 'checks', 'heartbeat');
    const viaHeartbeat = await fx.engine.postSystemMessage(
      { strategies: ['most-recent-foreground', 'heartbeat'] },
      'wake',
      'wake',
    );
    assert.equal(viaHeartbeat?.sessionId, hb.sessionId);
    const { sessionId: one } = await fx.engine.acceptUserMessage(chat('m1', 'a', '1'));
    fx.clock.advance(1_000);
    const { sessionId: two } = await fx.engine.acceptUserMessage(chat('m2', 'b', '2'));
    fx.clock.advance(1_000);
    // A system message to session one is not user activity: two stays the most recent foreground.
    await fx.engine.postSystemMessage({ sessionId: one }, 'a wake for one', 'wake');
    const routed = await fx.engine.postSystemMessage(
      { strategies: ['most-recent-foreground'] },
      'to the foreground',
      'wake',
    );
    assert.equal(routed?.sessionId, two);
    assert.equal(
      (await fx.engine.postSystemMessage({ strategies: ['heartbeat'] }, 'hb', 'wake'))?.sessionId,
      hb.sessionId,
    );
    assert.equal(await fx.engine.postSystemMessage({ sessionId: 'nope' }, 'x', 'wake'), null);
    fx.clock.advance(1_000);
    await fx.engine.acceptUserMessage(chat('m3', 'c', '1'));
    assert.equal(
      (await fx.engine.postSystemMessage({ strategies: ['most-recent-foreground'] }, 'again', 'wake'))?.sessionId,
      one,
    );
    await fx.engine.idle();
    // The user session woken by a system message answers its user's channel.
    assert.ok(fx.outbox.to('telegram|1').some((t) => t.includes('a wake for one')));
    assert.equal(fx.outbox.to('').length, 0);
  });

  it('keeps one cron session per task id and one heartbeat session', async () => {
    fx = await engineOnStore();
    const a = await fx.engine.postScheduled({ type: 'cron', id: 'n' }, 'run 1', 'cron:n');
    const b = await fx.engine.postScheduled({ type: 'cron', id: 'n' }, 'run 2', 'cron:n');
    const c = await fx.engine.postScheduled({ type: 'cron', id: 'm' }, 'run 1', 'cron:m');
    const h1 = await fx.engine.postScheduled({ type: 'heartbeat' }, 'x', 'heartbeat');
    const h2 = await fx.engine.postScheduled({ type: 'heartbeat' }, 'y', 'heartbeat');
    assert.equal(a.sessionId, b.sessionId);
    assert.notEqual(a.sessionId, c.sessionId);
    assert.equal(h1.sessionId, h2.sessionId);
    await assert.rejects(fx.engine.postScheduled({ type: 'cron', id: ' ' }, 'x', 'cron'), /id: id must not be empty/);
    await fx.engine.idle();
    assert.equal(fx.outbox.sent.length, 0);
  });
});
