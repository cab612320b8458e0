import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../core/clock.ts';
import { StopSignal } from './stop-signal.ts';

describe('StopSignal', () => {
  it('passes values and errors through, and withdraws each wait once it settles', async () => {
    const signal = new StopSignal();
    for (let i = 0; i < 100; i += 1)
      assert.deepEqual(await signal.race(Promise.resolve(i)), { stopped: false, value: i });
    await assert.rejects(signal.race(Promise.reject(new Error('boom'))), /boom/);
    assert.equal(signal.waiting, 0, 'no listener piles up');
  });

  it('wakes pending waits and sleeps on stop, and answers stopped at once afterwards', async () => {
    const signal = new StopSignal();
    const clock = new ManualClock();
    const never = signal.race(new Promise<void>(() => {}));
    const nap = signal.sleep(clock, 1_000);
    assert.equal(signal.waiting, 2);
    signal.stop();
    assert.deepEqual(await never, { stopped: true });
    assert.equal(await nap, false);
    assert.equal(clock.pending, 0, 'the sleep timer was cancelled');
    assert.deepEqual(await signal.race(Promise.resolve(1)), { stopped: true });
  });

  it('sleeps on the injected clock', async () => {
    const signal = new StopSignal();
    const clock = new ManualClock();
    const nap = signal.sleep(clock, 1_000);
    clock.advance(1_000);
    assert.equal(await nap, true);
  });
});
