// SessionWaiting on the manual clock: the waiting reason, when a wait is news, and how content, activity, a message
// and the end move it and its two timers.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../core/clock.ts';
import type { WaitingReason } from './session-log.ts';
import { SessionWaiting } from './session-waiting.ts';

const SAFETY_NET_MS = 15_000;
const IDLE_MS = 60_000;

function rig() {
  const clock = new ManualClock();
  const silences: number[] = [];
  const idles: (WaitingReason | null)[] = [];
  const waiting = new SessionWaiting({
    clock,
    safetyNetMs: SAFETY_NET_MS,
    idleTimeoutMs: IDLE_MS,
    onSilence: () => silences.push(clock.now()),
    onIdle: (reason) => idles.push(reason),
  });
  return { clock, silences, idles, waiting };
}

describe('SessionWaiting', () => {
  it('a wait is news once: entering again (another reason) is not, until a message resumes the work', () => {
    const { waiting } = rig();
    assert.equal(waiting.reason, null);
    assert.equal(waiting.enter('turn-end'), true);
    assert.equal(waiting.enter('question'), false);
    assert.equal(waiting.reason, 'question');
    waiting.resume();
    assert.equal(waiting.reason, null);
    assert.equal(waiting.enter('permission'), true);
  });

  it('entering stops the safety net and starts the idle timeout, which reports the reason it waits for', () => {
    const { clock, silences, idles, waiting } = rig();
    waiting.armSafetyNet(true);
    waiting.enter('turn-end');
    clock.advance(IDLE_MS);
    assert.deepEqual(silences, []);
    assert.deepEqual(idles, ['turn-end']);
  });

  it('the safety net is armed only when quiet and not waiting', () => {
    const { clock, silences, waiting } = rig();
    waiting.armSafetyNet(false);
    assert.equal(clock.pending, 0);
    waiting.enter('turn-end');
    waiting.armSafetyNet(true);
    clock.advance(SAFETY_NET_MS);
    assert.deepEqual(silences, [], 'not while waiting');
    waiting.resume();
    waiting.armSafetyNet(true);
    clock.advance(SAFETY_NET_MS);
    assert.equal(silences.length, 1);
  });

  it('content clears a stall (the next wait is news) but not the wait after a finished turn', () => {
    const { clock, idles, waiting } = rig();
    waiting.enter('turn-end');
    waiting.content();
    assert.equal(waiting.reason, 'turn-end');
    waiting.resume();
    waiting.enter('stalled');
    waiting.content();
    assert.equal(waiting.reason, null);
    clock.advance(IDLE_MS);
    assert.deepEqual(idles, [], 'its idle timeout stopped');
    assert.equal(waiting.enter('stalled'), true);
  });

  it('activity breaks a stall without making the next stall news; content after it does', () => {
    const { clock, idles, waiting } = rig();
    waiting.enter('stalled');
    waiting.activity();
    assert.equal(waiting.reason, null);
    clock.advance(IDLE_MS);
    assert.deepEqual(idles, []);
    assert.equal(waiting.enter('stalled'), false, 'the alarm is not repeated');
    waiting.activity();
    waiting.content();
    assert.equal(waiting.enter('stalled'), true);
  });

  it('activity leaves any other wait alone', () => {
    const { waiting } = rig();
    waiting.enter('permission');
    waiting.activity();
    assert.equal(waiting.reason, 'permission');
  });

  it('end stops both timers and waits for nothing', () => {
    const { clock, silences, idles, waiting } = rig();
    waiting.armSafetyNet(true);
    waiting.enter('question');
    waiting.armSafetyNet(true);
    waiting.end();
    assert.equal(waiting.reason, null);
    assert.equal(clock.pending, 0);
    clock.advance(IDLE_MS * 2);
    assert.deepEqual(silences, []);
    assert.deepEqual(idles, []);
  });
});
