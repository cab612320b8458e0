// An engine whose node lost the `primary` lease (it stalled past it, and another node took the engine over) says
// nothing more: its replies are sent fenced, so the refused reply is not delivered, and the failed turn is not answered
// "Internal error." either (the new holder closes or runs that turn itself). The same engine answers normally while the
// lease is held.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { EngineFixture } from '../../test/support/engine-fixture.ts';
import { chatMessage, engineFixture } from '../../test/support/engine-fixture.ts';
import { FencedError } from '../store/cluster-fence.ts';

let fx: EngineFixture | null = null;
afterEach(async () => {
  await fx?.close();
  fx = null;
});

describe('engine: a turn on a node that lost the lease', { timeout: 30_000 }, () => {
  it('answers while held; once fenced, neither its reply nor an "Internal error." goes out', async () => {
    fx = await engineFixture();
    await fx.engine.acceptUserMessage(chatMessage('m1', 'hello', '42', '42'));
    await fx.engine.idle();
    assert.deepEqual(fx.outbox.to('telegram|42'), ['echo: hello'], 'the reply goes out while the lease is held');
    fx.outbox.refuseFenced = new FencedError('primary', 'a');
    await fx.engine.acceptUserMessage(chatMessage('m2', 'again', '42', '42'));
    await fx.engine.idle();
    assert.deepEqual(fx.outbox.to('telegram|42'), ['echo: hello'], 'nothing more from the stale holder');
    assert.ok(
      fx.logs.some((l) => l.msg === 'engine turn left to the node that took the engine over'),
      'the turn is left to the new holder',
    );
    assert.ok(!fx.logs.some((l) => l.msg === 'engine turn failed'), 'not reported as an engine fault');
  });
});
