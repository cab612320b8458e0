// SessionTimers on the manual clock: each timer fires once per arming, after its own delay, and never once cancelled.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../core/clock.ts';
import { SessionTimers } from './session-timers.ts';

const SAFETY_NET_MS = 15_000;
const IDLE_MS = 60_000;

function rig() {
  const clock = new ManualClock();
  const fired: string[] = [];
  const timers = new SessionTimers({
    clock,
    safetyNetMs: SAFETY_NET_MS,
    idleTimeoutMs: IDLE_MS,
    onSilence: () => fired.push('silence'),
    onIdle: () => fired.push('idle'),
  });
  return { clock, fired, timers };
}

describe('SessionTimers', () => {
  it('the safety net fires once, safetyNetMs after it was last armed; re-arming starts it again from now', () => {
    const { clock, fired, timers } = rig();
    timers.resetSafetyNet(true);
    clock.advance(SAFETY_NET_MS - 1);
    timers.resetSafetyNet(true);
    clock.advance(SAFETY_NET_MS - 1);
    assert.deepEqual(fired, []);
    assert.equal(timers.safetyNetArmed, true);
    clock.advance(1);
    assert.deepEqual(fired, ['silence']);
    assert.equal(timers.safetyNetArmed, false);
    clock.advance(SAFETY_NET_MS * 3);
    assert.deepEqual(fired, ['silence'], 'once per arming');
  });

  it('resetSafetyNet(false) and cancelSafetyNet stop an armed safety net', () => {
    const { clock, fired, timers } = rig();
    timers.resetSafetyNet(true);
    timers.resetSafetyNet(false);
    assert.equal(clock.pending, 0);
    timers.resetSafetyNet(true);
    timers.cancelSafetyNet();
    clock.advance(SAFETY_NET_MS * 2);
    assert.deepEqual(fired, []);
  });

  it('the idle timer fires idleTimeoutMs after its last restart; cancelIdle stops it', () => {
    const { clock, fired, timers } = rig();
    timers.restartIdle();
    clock.advance(IDLE_MS / 2);
    timers.restartIdle();
    clock.advance(IDLE_MS - 1);
    assert.equal(timers.idleRunning, true);
    assert.deepEqual(fired, []);
    clock.advance(1);
    assert.deepEqual(fired, ['idle']);
    assert.equal(timers.idleRunning, false);
    timers.restartIdle();
    timers.cancelIdle();
    clock.advance(IDLE_MS * 2);
    assert.deepEqual(fired, ['idle']);
  });

  it('cancelAll leaves no timer pending on the clock', () => {
    const { clock, fired, timers } = rig();
    timers.resetSafetyNet(true);
    timers.restartIdle();
    assert.equal(clock.pending, 2);
    timers.cancelAll();
    assert.equal(clock.pending, 0);
    clock.advance(IDLE_MS * 2);
    assert.deepEqual(fired, []);
  });
});
