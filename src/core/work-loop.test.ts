import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from './clock.ts';
import type { StepResult } from './work-loop.ts';
import { WorkLoop } from './work-loop.ts';

/** A queue of work items the loop drains one per step. */
function queueLoop(clock: ManualClock, retryDelay = (n: number) => 100 * n) {
  const queue: string[] = [];
  const done: string[] = [];
  const errors: number[] = [];
  let fail = 0;
  let gate: Promise<void> | null = null;
  const loop = new WorkLoop({
    clock,
    retryDelay,
    onError: (_error, failures, delay) => errors.push(failures * 10_000 + delay),
    step: async (): Promise<StepResult> => {
      if (gate) await gate;
      if (fail > 0) {
        fail -= 1;
        throw new Error('boom');
      }
      const item = queue.shift();
      if (item === undefined) return 'quiet';
      done.push(item);
      return 'more';
    },
  });
  return {
    loop,
    queue,
    done,
    errors,
    failNext: (n: number) => void (fail = n),
    hold: () => {
      let release = () => {};
      gate = new Promise<void>((resolve) => (release = resolve));
      return () => {
        gate = null;
        release();
      };
    },
  };
}

describe('WorkLoop', () => {
  it('drains until the step reports quiet, and idle() waits for the drain', async () => {
    const t = queueLoop(new ManualClock());
    t.queue.push('a', 'b', 'c');
    t.loop.kick();
    assert.equal(t.loop.running, true);
    await t.loop.idle();
    assert.deepEqual(t.done, ['a', 'b', 'c']);
    assert.equal(t.loop.running, false);
  });

  it('coalesces kicks during a drain into one more pass', async () => {
    const t = queueLoop(new ManualClock());
    const release = t.hold();
    t.queue.push('a');
    t.loop.kick();
    t.loop.kick();
    t.loop.kick();
    await Promise.resolve();
    t.queue.push('b');
    t.loop.kick();
    assert.equal(t.loop.running, true, 'one drain, still in its first step');
    release();
    await t.loop.idle();
    assert.deepEqual(t.done, ['a', 'b'], 'the kick during the drain was not lost');
    assert.equal(t.loop.running, false);
  });

  it('retries a failing step after its backoff on the clock, holding kicks until then', async () => {
    const clock = new ManualClock();
    const t = queueLoop(clock);
    t.queue.push('a');
    t.failNext(2);
    t.loop.kick();
    await t.loop.idle();
    assert.deepEqual(t.errors, [10_100]);
    assert.equal(t.loop.scheduled, true);
    t.loop.kick();
    await t.loop.idle();
    assert.deepEqual(t.done, [], 'a kick during the backoff waits for it');
    clock.advance(99);
    await t.loop.idle();
    assert.deepEqual(t.done, []);
    clock.advance(1);
    await t.loop.idle();
    assert.deepEqual(t.errors, [10_100, 20_200]);
    clock.advance(200);
    await t.loop.idle();
    assert.deepEqual(t.done, ['a']);
    assert.equal(t.loop.scheduled, false);
  });

  it('wakes itself when the step asks, and a kick brings the wake-up forward', async () => {
    const clock = new ManualClock();
    let calls = 0;
    const loop = new WorkLoop({
      clock,
      retryDelay: () => 1,
      step: () => (++calls === 1 ? { wakeInMs: 500 } : 'quiet'),
    });
    loop.kick();
    await loop.idle();
    assert.equal(loop.scheduled, true);
    clock.advance(499);
    await loop.idle();
    assert.equal(calls, 1);
    clock.advance(1);
    await loop.idle();
    assert.equal(calls, 2);
    calls = 0;
    loop.kick();
    await loop.idle();
    assert.equal(loop.scheduled, true);
    loop.kick();
    await loop.idle();
    assert.equal(calls, 2);
    assert.equal(loop.scheduled, false);
    assert.equal(clock.pending, 0);
  });

  it('stop() waits for the step in flight, cancels the wake-up and ignores later kicks', async () => {
    const clock = new ManualClock();
    const t = queueLoop(clock);
    const release = t.hold();
    t.queue.push('a', 'b');
    t.loop.kick();
    await Promise.resolve();
    let stopped = false;
    const stopping = t.loop.stop().then(() => (stopped = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(stopped, false);
    release();
    await stopping;
    assert.deepEqual(t.done, ['a'], 'no step after the stop');
    t.loop.kick();
    assert.equal(t.loop.running, false);
    assert.equal(clock.pending, 0);
  });

  it('start() after a stop takes kicks again, with no failures counted from before the stop', async () => {
    const clock = new ManualClock();
    const t = queueLoop(clock);
    t.queue.push('a');
    t.failNext(1);
    t.loop.kick();
    await t.loop.idle();
    assert.deepEqual(t.errors, [10_100], 'one failure, a retry scheduled');
    await t.loop.stop();
    assert.equal(clock.pending, 0, 'the retry is cancelled');
    t.loop.kick();
    assert.equal(t.loop.running, false, 'stopped: the kick is ignored');
    t.loop.start();
    t.failNext(1);
    t.loop.kick();
    await t.loop.idle();
    assert.deepEqual(t.errors, [10_100, 10_100], 'counted as the first failure again');
    clock.advance(100);
    await t.loop.idle();
    assert.deepEqual(t.done, ['a']);
  });

  it('calls onQuiet when a drain ends with nothing scheduled', async () => {
    let quiet = 0;
    const loop = new WorkLoop({
      clock: new ManualClock(),
      retryDelay: () => 1,
      step: () => 'quiet',
      onQuiet: () => (quiet += 1),
    });
    loop.kick();
    await loop.idle();
    assert.equal(quiet, 1);
  });
});
