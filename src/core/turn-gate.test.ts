import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TurnGate } from './turn-gate.ts';

describe('TurnGate', () => {
  it('runs jobs in order, one per turn of the event loop, so other callbacks run between them', async () => {
    const gate = new TurnGate();
    const events: string[] = [];
    const jobs = [1, 2, 3].map((n) =>
      gate.run(() => {
        events.push(`job ${n}`);
        // Queued behind nothing but the loop: it must run before the next job.
        setImmediate(() => events.push(`between ${n}`));
        return n * 10;
      }),
    );
    assert.deepEqual(await Promise.all(jobs), [10, 20, 30]);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(events, ['job 1', 'between 1', 'job 2', 'between 2', 'job 3', 'between 3']);
  });

  it('settles with what a job throws, and goes on with the next', async () => {
    const gate = new TurnGate();
    const failed = gate.run(() => {
      throw new Error('no capacity');
    });
    const next = gate.run(() => 'ran');
    await assert.rejects(failed, /no capacity/);
    assert.equal(await next, 'ran');
  });
});
