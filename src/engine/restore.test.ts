import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import type { EngineFixture, EngineFixtureOptions } from '../../test/support/engine-fixture.ts';
import { chatMessage, engineFixture, isSubagentRequest } from '../../test/support/engine-fixture.ts';
import { Gate, ScriptedInference } from '../../test/support/scripted-inference.ts';
import { openTestStore } from '../../test/support/test-store.ts';

/** An engine fixture over the test's database (SQLite, or PostgreSQL with TEST_DATABASE=postgres). */
const engineOnStore = (options: EngineFixtureOptions = {}): Promise<EngineFixture> =>
  engineFixture({ ...options, open: (path) => openTestStore(path) });

let fx: EngineFixture | null = null;
afterEach(async () => {
  await fx?.close();
  fx = null;
});

const chat = chatMessage;

const isSubagent = isSubagentRequest;
const hangOn = (text: string) =>
  new ScriptedInference().onRequest((req) => (req.messages.at(-1)?.content === text ? 'hang' : undefined));

describe('engine: restore after a crash', { timeout: 30_000 }, () => {
  it('closes a cut-off user turn with "Internal error." to the same channel and runs the queued messages', async () => {
    fx = await engineOnStore({ inference: hangOn('m1') });
    const { sessionId } = await fx.engine.acceptUserMessage(chat('id1', 'm1'));
    await fx.engine.acceptUserMessage(chat('id2', 'm2'));
    await fx.engine.acceptUserMessage(chat('id3', 'm3'));
    await fx.inference.waitForRequests(1);
    // Crash: the engine is abandoned mid-turn with two messages queued behind it.
    fx = await fx.reopen();
    await fx.engine.idle();
    assert.deepEqual(
      fx.outbox.deliveries.map((m) => [m.to, m.text, m.replyTo]),
      [
        ['telegram|42', 'Internal error.', 'id1'],
        ['telegram|42', 'echo: m2', 'id2'],
        ['telegram|42', 'echo: m3', 'id3'],
      ],
    );
    const ends = fx.records(sessionId).filter((r) => r.type === 'turn_end');
    assert.deepEqual(
      ends.map((r) => [r.messageId, r.outcome]),
      [
        ['id1', 'internal_error'],
        ['id2', 'ok'],
        ['id3', 'ok'],
      ],
    );
    // The cut-off message is not run again; m2's turn sees m1 closed in its history.
    assert.equal(fx.inference.requests.filter((r) => r.messages.at(-1)?.content === 'm1').length, 0);
    assert.deepEqual(
      fx.inference.requests[0]?.messages.map((m) => m.content),
      ['m1', 'Internal error.', 'm2'],
    );
    // A second restart finds nothing to do.
    fx = await fx.reopen();
    await fx.engine.idle();
    assert.equal(fx.outbox.sent.length, 0);
    assert.equal(fx.inference.requests.length, 0);
  });

  it('never re-runs a message after repeated crashes', async () => {
    fx = await engineOnStore({ inference: hangOn('m1') });
    await fx.engine.acceptUserMessage(chat('id1', 'm1'));
    await fx.engine.acceptUserMessage(chat('id2', 'm2'));
    await fx.inference.waitForRequests(1);
    // The first restart hangs on m2 as well, then crashes again.
    fx = await fx.reopen({ inference: hangOn('m2') });
    await fx.inference.waitForRequests(1);
    assert.deepEqual(
      fx.outbox.sent.map((m) => m.text),
      ['Internal error.'],
    );
    fx = await fx.reopen();
    await fx.engine.idle();
    assert.deepEqual(
      fx.outbox.deliveries.map((m) => [m.text, m.replyTo]),
      [['Internal error.', 'id2']],
    );
    assert.equal(fx.inference.requests.length, 0);
  });

  it('closes cut-off cron and heartbeat turns silently', async () => {
    fx = await engineOnStore({ inference: new ScriptedInference().onRequest(() => 'hang') });
    const cron = await fx.engine.postScheduled({ type: 'cron', id: 'nightly' }, 'run', 'cron:nightly');
    const hb = await fx.engine.postScheduled({ type: 'heartbeat' }, 'checks', 'heartbeat');
    await fx.inference.waitForRequests(2);
    fx = await fx.reopen();
    await fx.engine.idle();
    assert.equal(fx.outbox.sent.length, 0);
    assert.equal(fx.inference.requests.length, 0);
    for (const id of [cron.sessionId, hb.sessionId]) {
      const end = fx.records(id).at(-1);
      assert.deepEqual([end?.type, end?.outcome], ['turn_end', 'internal_error']);
    }
    // The same task maps to the same session after the restart.
    assert.equal(
      (await fx.engine.postScheduled({ type: 'cron', id: 'nightly' }, 'run 2', 'cron:nightly')).sessionId,
      cron.sessionId,
    );
    await fx.engine.idle();
  });

  it('tells the parent that a subagent cut off by a crash failed while offline', async () => {
    fx = await engineOnStore({
      inference: new ScriptedInference().onRequest((req) => (isSubagent(req) ? 'hang' : undefined)),
    });
    const { sessionId: parentId } = await fx.engine.acceptUserMessage(chat('id1', 'hi'));
    await fx.engine.idle();
    const { sessionId: subId } = await fx.engine.startBackgroundAgent({
      prompt: 'long job',
      name: 'digger',
      parentSessionId: parentId,
    });
    await fx.inference.waitForRequests(2);
    fx = await fx.reopen();
    await fx.engine.idle();
    const told = fx
      .records(parentId)
      .filter((r) => r.type === 'incoming')
      .at(-1);
    assert.equal(told?.origin, 'subagent:digger');
    assert.match(String(told?.text), new RegExp(`"digger" \\(session ${subId}\\) failed while offline`));
    // The parent's turn answers its user with it.
    assert.equal(fx.outbox.sent.length, 1);
    assert.match(fx.outbox.sent[0]?.text ?? '', /failed while offline/);
    assert.equal(fx.records(subId).at(-1)?.outcome, 'internal_error');
    // Restarting again does not tell the parent twice.
    fx = await fx.reopen();
    await fx.engine.idle();
    assert.equal(
      fx.records(parentId).filter((r) => r.type === 'incoming' && String(r.text).includes('offline')).length,
      1,
    );
  });

  it('delivers a subagent result that was recorded before the crash instead of a failure, once', async () => {
    fx = await engineOnStore({ inference: new ScriptedInference().onRequest(() => 'hang') });
    const cron = await fx.engine.postScheduled({ type: 'cron', id: 'c' }, 'run', 'cron:c');
    await fx.inference.waitForRequests(1);
    fx = await fx.reopen({ inference: new ScriptedInference().onRequest(() => 'hang') });
    const { sessionId: subId } = await fx.engine.startBackgroundAgent({
      prompt: 'job',
      name: 'w',
      parentSessionId: cron.sessionId,
    });
    await fx.inference.waitForRequests(1);
    // As if the subagent had recorded its result for the parent, then crashed before turn_end.
    const path = join(fx.home, 'engine', `${subId}.jsonl`);
    const seq = fx.records(subId).length;
    appendFileSync(
      path,
      `${JSON.stringify({ type: 'outgoing', text: 'the result', target: `session:${cron.sessionId}`, v: 1, seq: seq + 1, ts: 1 })}\n`,
    );
    fx = await fx.reopen({ inference: new ScriptedInference().onRequest(() => 'hang') });
    const texts = () =>
      fx
        ?.records(cron.sessionId)
        .filter((r) => r.type === 'incoming')
        .map((r) => r.text);
    assert.deepEqual(texts(), ['run', 'the result']);
    fx = await fx.reopen();
    await fx.engine.idle();
    assert.deepEqual(texts(), ['run', 'the result']);
  });

  it('keeps every record before a torn or malformed line', async () => {
    fx = await engineOnStore();
    const { sessionId } = await fx.engine.acceptUserMessage(chat('id1', 'remember the word kiwi'));
    await fx.engine.idle();
    fx = await fx.reopen({ inference: hangOn('m2') });
    await fx.engine.acceptUserMessage(chat('id2', 'm2'));
    await fx.engine.acceptUserMessage(chat('id3', 'm3'));
    await fx.inference.waitForRequests(1);
    const path = join(fx.home, 'engine', `${sessionId}.jsonl`);
    // A malformed line in the middle and a torn last line, as a crash mid-write leaves it.
    const lines = readFileSync(path, 'utf8').split('\n');
    lines.splice(3, 0, '{"this is": not json');
    writeFileSync(path, `${lines.join('\n')}{"type":"incoming","messageId":"id4","kin`);
    fx = await fx.reopen();
    await fx.engine.idle();
    assert.deepEqual(
      fx.outbox.deliveries.map((m) => [m.text, m.replyTo]),
      [
        ['Internal error.', 'id2'],
        ['echo: m3', 'id3'],
      ],
    );
    // The first turn survives in the history.
    assert.deepEqual(
      fx.inference.requests[0]?.messages.slice(0, 2).map((m) => m.content),
      ['remember the word kiwi', 'echo: remember the word kiwi'],
    );
    assert.ok(fx.logs.some((l) => /torn tail/.test(l.msg)));
    assert.ok(readFileSync(path, 'utf8').endsWith('\n'));
  });

  it('restores the descriptor from the first record and skips a log without one, saying so', async () => {
    fx = await engineOnStore();
    const { sessionId } = await fx.engine.acceptUserMessage(chat('id1', 'hi'));
    await fx.engine.idle();
    writeFileSync(
      join(fx.home, 'engine', 'broken.jsonl'),
      `${JSON.stringify({ type: 'incoming', messageId: 'x', kind: 'user', origin: 'telegram|9', text: 'orphan', v: 1, seq: 1, ts: 1 })}\n`,
    );
    writeFileSync(
      join(fx.home, 'engine', 'baddesc.jsonl'),
      `${JSON.stringify({ type: 'session_created', descriptor: { type: 'user', connector: 'telegram' }, v: 1, seq: 1, ts: 1 })}\n`,
    );
    fx = await fx.reopen();
    const listed = fx.engine.listSessions();
    assert.deepEqual(
      listed.map((s) => s.id),
      [sessionId],
    );
    assert.deepEqual(listed[0]?.descriptor, {
      type: 'user',
      connector: 'telegram',
      userId: '42',
      channelId: 'telegram|42',
    });
    assert.deepEqual(
      fx.logs
        .filter((l) => /engine log skipped/.test(l.msg))
        .map((l) => l.session)
        .sort(),
      ['baddesc', 'broken'],
    );
    assert.equal((await fx.engine.acceptUserMessage(chat('id2', 'again'))).sessionId, sessionId);
    await fx.engine.idle();
    assert.deepEqual(
      fx.outbox.sent.map((m) => m.text),
      ['echo: again'],
    );
  });

  it('keeps most-recent-foreground by last user activity across a restart', async () => {
    // The index is not flushed before the first crash: the activity comes back from the logs' tails.
    fx = await engineOnStore({ overrides: { engine: { indexFlushMs: 60_000 } } });
    const { sessionId: one } = await fx.engine.acceptUserMessage(chat('id1', 'a', '1'));
    fx.clock.advance(1_000);
    const { sessionId: two } = await fx.engine.acceptUserMessage(chat('id2', 'b', '2'));
    fx.clock.advance(1_000);
    await fx.engine.acceptUserMessage(chat('id3', 'c', '1'));
    fx.clock.advance(1_000);
    // Later activity in session two that is not from its user.
    await fx.engine.postSystemMessage({ sessionId: two }, 'wake for two', 'wake');
    await fx.engine.idle();
    fx = await fx.reopen();
    assert.equal(
      (await fx.engine.postSystemMessage({ strategies: ['most-recent-foreground'] }, 'x', 'wake'))?.sessionId,
      one,
    );
    fx.clock.advance(fx.config.engine.indexFlushMs);
    await fx.engine.idle();
    fx = await fx.reopen();
    assert.equal(
      (await fx.engine.postSystemMessage({ strategies: ['most-recent-foreground'] }, 'y', 'wake'))?.sessionId,
      one,
    );
    await fx.engine.idle();
  });

  it('a stop lets a running turn finish within engine.stopGraceMs', async () => {
    const gate = new Gate();
    fx = await engineOnStore({
      inference: new ScriptedInference().script(gate),
      overrides: { engine: { stopGraceMs: 60_000 } },
    });
    const { sessionId } = await fx.engine.acceptUserMessage(chat('id1', 'm1'));
    await fx.engine.acceptUserMessage(chat('id2', 'm2'));
    await gate.reached();
    const stopped = fx.engine.stop();
    gate.release({ text: 'finished in time' });
    await stopped;
    assert.deepEqual(
      fx.outbox.sent.map((m) => m.text),
      ['finished in time'],
    );
    assert.equal(fx.records(sessionId).at(-1)?.outcome, 'ok');
    fx = await fx.reopen();
    await fx.engine.idle();
    assert.deepEqual(
      fx.outbox.sent.map((m) => m.text),
      ['echo: m2'],
      'no Internal error.: the turn had ended',
    );
  });

  it('a clean stop leaves queued messages on disk for the next start', async () => {
    fx = await engineOnStore({
      inference: new ScriptedInference().onRequest(() => 'hang'),
      overrides: { engine: { stopGraceMs: 0 } },
    });
    await fx.engine.acceptUserMessage(chat('id1', 'm1'));
    await fx.engine.acceptUserMessage(chat('id2', 'm2'));
    await fx.inference.waitForRequests(1);
    await fx.engine.stop();
    await assert.rejects(fx.engine.acceptUserMessage(chat('id3', 'm3')), /stopped/);
    fx = await fx.reopen();
    await fx.engine.idle();
    assert.deepEqual(
      fx.outbox.sent.map((m) => m.text),
      ['Internal error.', 'echo: m2'],
    );
  });
});
