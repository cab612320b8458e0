import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../core/clock.ts';
import { silentLogger } from '../../core/logger.ts';
import { DispatchLanes } from './dispatch-lanes.ts';

describe('DispatchLanes', () => {
  it('runs the steps of one dispatch one at a time, in order; other dispatches run beside them', async () => {
    const lanes = new DispatchLanes({ clock: new ManualClock(), logger: silentLogger(), onFailure: () => undefined });
    const seen: string[] = [];
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    void lanes.serial('a', 'one', async () => {
      seen.push('a1 start');
      await gate;
      seen.push('a1 end');
    });
    void lanes.serial('a', 'two', async () => void seen.push('a2'));
    await lanes.serial('b', 'one', async () => void seen.push('b1'));
    assert.deepEqual(seen, ['a1 start', 'b1']);
    assert.ok(lanes.busy('a'));
    assert.equal(lanes.busy('b'), false);
    release();
    await lanes.idle();
    assert.deepEqual(seen, ['a1 start', 'b1', 'a1 end', 'a2']);
    assert.equal(lanes.busy('a'), false);
  });

  it('a step that throws is reported with its label and does not stop the lane', async () => {
    const failures: string[] = [];
    const lanes = new DispatchLanes({
      clock: new ManualClock(),
      logger: silentLogger(),
      onFailure: (id, message) => void failures.push(`${id} ${message}`),
    });
    await lanes.serial('a', 'setup', async () => {
      throw new Error('no worktree');
    });
    let ran = false;
    await lanes.serial('a', 'next', async () => {
      ran = true;
    });
    assert.deepEqual(failures, ['a setup: no worktree']);
    assert.ok(ran);
  });
});
