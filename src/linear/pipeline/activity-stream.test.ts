import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeLinearApi } from '../../../test/support/fake-linear-api.ts';
import { ManualClock } from '../../core/clock.ts';
import { silentLogger } from '../../core/logger.ts';
import { ActivityStream, MAX_THOUGHT_CHARS } from './activity-stream.ts';

function setup() {
  const clock = new ManualClock();
  const linear = new FakeLinearApi();
  const stream = new ActivityStream({
    linear,
    agentSessionId: 'as-1',
    clock,
    logger: silentLogger(),
    throttleMs: 3_000,
  });
  return { clock, linear, stream };
}

describe('ActivityStream', () => {
  it('sends the first item at once and coalesces the rest of the window into one thought and one action', async () => {
    const { clock, linear, stream } = setup();
    stream.thought('Looking at the code.');
    await stream.flush();
    assert.deepEqual(linear.activitiesOf('as-1'), [{ type: 'thought', body: 'Looking at the code.' }]);
    stream.action('Running Bash', 'npm test');
    stream.thought('Tests fail.');
    stream.action('Running Edit', 'src/a.ts');
    stream.thought('Fixed.');
    await Promise.resolve();
    assert.equal(linear.activitiesOf('as-1').length, 1, 'held back inside the window');
    clock.advance(3_000);
    await stream.flush();
    assert.deepEqual(linear.activitiesOf('as-1').slice(1), [
      { type: 'action', action: 'Running Edit', parameter: 'src/a.ts (+1 earlier tool call)' },
      { type: 'thought', body: 'Tests fail.\n\nFixed.' },
    ]);
  });

  it('posts lifecycle messages after what is buffered, in order, and keeps the tail of a long thought', async () => {
    const { linear, stream } = setup();
    stream.thought('first');
    stream.thought('x'.repeat(5_000));
    await stream.post({ type: 'response', body: 'done' });
    const sent = linear.activitiesOf('as-1');
    assert.equal(sent.length, 3);
    assert.equal(sent[0]?.type, 'thought');
    const long = sent[1] as { type: 'thought'; body: string };
    assert.equal(long.body.length, MAX_THOUGHT_CHARS);
    assert.ok(long.body.startsWith('…x'));
    assert.deepEqual(sent[2], { type: 'response', body: 'done' });
  });

  it('stops posting for good after a user error (deleted session), without retrying', async () => {
    const { linear, stream } = setup();
    linear.deletedAgentSessions.add('as-1');
    assert.equal(await stream.post({ type: 'thought', body: 'a' }), false);
    assert.equal(stream.alive, false);
    assert.equal(await stream.post({ type: 'response', body: 'b' }), false);
    assert.equal(linear.callsOf('createAgentActivity').length, 1);
  });
});
