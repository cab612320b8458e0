// The engine started again in the same process after a stop (a node serving `primary` again after it rejoined the
// cluster): it restores its sessions and queued messages from its logs, as a new process would, and answers again.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { EngineFixture } from '../../test/support/engine-fixture.ts';
import { chatMessage, engineFixture } from '../../test/support/engine-fixture.ts';
import { ScriptedInference } from '../../test/support/scripted-inference.ts';
import { openTestStore } from '../../test/support/test-store.ts';

let fx: EngineFixture | null = null;
afterEach(async () => {
  await fx?.close();
  fx = null;
});

describe('engine: start → stop → start in one process', { timeout: 30_000 }, () => {
  it('restores its sessions and queued messages, closes the cut-off turn, and answers again', async () => {
    let hang = true;
    const inference = new ScriptedInference().onRequest((req) =>
      hang && req.messages.at(-1)?.content === 'm1' ? 'hang' : undefined,
    );
    fx = await engineFixture({ inference, open: (path) => openTestStore(path) });
    const { engine } = fx;
    const first = await engine.acceptUserMessage(chatMessage('id0', 'm0'));
    await engine.idle();
    await engine.acceptUserMessage(chatMessage('id1', 'm1'));
    await engine.acceptUserMessage(chatMessage('id2', 'm2'));
    await fx.inference.waitForRequests(2);

    // Stopped mid-turn (the lease lost) with a message queued behind it; nothing is taken meanwhile.
    await engine.stop();
    await assert.rejects(engine.acceptUserMessage(chatMessage('id3', 'm3')), /stopped/);
    hang = false;

    // Started again: the same object restores from its logs.
    await engine.start();
    await engine.idle();
    assert.deepEqual(
      fx.outbox.deliveries.map((m) => [m.text, m.replyTo]),
      [
        ['echo: m0', 'id0'],
        ['Internal error.', 'id1'],
        ['echo: m2', 'id2'],
      ],
    );
    assert.deepEqual(
      engine.listSessions().map((s) => s.id),
      [first.sessionId],
    );
    // Accepted ids survive the restart (a repeat is a duplicate), and a new message is answered with the history.
    assert.equal((await engine.acceptUserMessage(chatMessage('id2', 'm2'))).duplicate, true);
    const next = await engine.acceptUserMessage(chatMessage('id4', 'm4'));
    assert.equal(next.sessionId, first.sessionId);
    await engine.idle();
    assert.deepEqual(fx.outbox.deliveries.at(-1)?.text, 'echo: m4');
    assert.deepEqual(
      fx.inference.requests.at(-1)?.messages.map((m) => m.content),
      ['m0', 'echo: m0', 'm1', 'Internal error.', 'm2', 'echo: m2', 'm4'],
    );
    const ends = fx.records(first.sessionId).filter((r) => r.type === 'turn_end');
    assert.deepEqual(
      ends.map((r) => [r.messageId, r.outcome]),
      [
        ['id0', 'ok'],
        ['id1', 'internal_error'],
        ['id2', 'ok'],
        ['id4', 'ok'],
      ],
    );

    // And again: a third start finds nothing left to do.
    await engine.stop();
    await engine.start();
    await engine.idle();
    assert.equal(fx.outbox.deliveries.length, 4);
    assert.ok(fx.logs.every((line) => !String(line.msg).includes('engine logs are closed')));
  });
});
