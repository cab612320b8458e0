import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../core/clock.ts';
import type { WatchdogTrip } from './session-watchdog.ts';
import { describeTrip, resolveWatchdogLimits, SessionWatchdog } from './session-watchdog.ts';

function watch(limits = { inactivityMs: 120_000, maxTotalMs: 7_200_000, toolTimeoutMs: 600_000 }) {
  const clock = new ManualClock();
  const trips: WatchdogTrip[] = [];
  const dog = new SessionWatchdog({ clock, limits, onTrip: (t) => trips.push(t) });
  dog.start();
  return { clock, trips, dog };
}

describe('resolveWatchdogLimits', () => {
  it('takes each limit from the profile, then the config, then the defaults (seconds in, ms out)', () => {
    assert.deepEqual(resolveWatchdogLimits(undefined, undefined), {
      inactivityMs: 120_000,
      maxTotalMs: 7_200_000,
      toolTimeoutMs: 600_000,
    });
    assert.deepEqual(
      resolveWatchdogLimits({ watchdog: { inactivitySec: 30 } }, { inactivitySec: 60, maxTotalSec: 100 }),
      {
        inactivityMs: 30_000,
        maxTotalMs: 100_000,
        toolTimeoutMs: 600_000,
      },
    );
  });
});

describe('SessionWatchdog', () => {
  it('trips after the inactivity limit, and activity pushes the deadline back', () => {
    const { clock, trips, dog } = watch();
    clock.advance(100_000);
    dog.observe({ kind: 'activity' });
    clock.advance(100_000);
    assert.equal(trips.length, 0);
    clock.advance(20_000);
    assert.deepEqual(trips, [{ kind: 'inactivity', limitMs: 120_000, silentMs: 120_000 }]);
    assert.equal(describeTrip(trips[0] as WatchdogTrip), 'no activity for 120 s (limit 120 s)');
    clock.advance(1_000_000);
    assert.equal(trips.length, 1, 'trips once');
    assert.equal(clock.pending, 0);
  });

  it('gives a running tool the tool timeout instead of the inactivity limit, and trips on it', () => {
    const { clock, trips, dog } = watch();
    dog.observe({ kind: 'toolStart', id: 't1', name: 'Bash' });
    clock.advance(300_000);
    assert.equal(trips.length, 0, 'a silent tool call is not inactivity');
    dog.observe({ kind: 'activity' });
    clock.advance(300_000);
    assert.deepEqual(trips, [{ kind: 'tool', limitMs: 600_000, runningMs: 600_000, tool: 'Bash' }]);
  });

  it('goes back to the inactivity limit once the tool result arrives', () => {
    const { clock, trips, dog } = watch();
    dog.observe({ kind: 'toolStart', id: 't1', name: 'Bash' });
    clock.advance(500_000);
    dog.observe({ kind: 'toolEnd', id: 't1' });
    clock.advance(119_000);
    assert.equal(trips.length, 0);
    clock.advance(1_000);
    assert.equal(trips[0]?.kind, 'inactivity');
  });

  it('does not count the time a person takes to decide an approval, except against the total', () => {
    const { clock, trips, dog } = watch({ inactivityMs: 120_000, maxTotalMs: 7_200_000, toolTimeoutMs: 600_000 });
    dog.observe({ kind: 'toolStart', id: 't1', name: 'Bash' });
    clock.advance(500_000);
    dog.observe({ kind: 'waitStart' });
    clock.advance(1_800_000);
    assert.equal(trips.length, 0, 'waiting for a person is neither silence nor tool time');
    dog.observe({ kind: 'waitEnd' });
    clock.advance(99_000);
    assert.equal(trips.length, 0);
    clock.advance(1_000);
    assert.deepEqual(trips, [{ kind: 'tool', limitMs: 600_000, runningMs: 600_000, tool: 'Bash' }]);
    const total = watch({ inactivityMs: 120_000, maxTotalMs: 600_000, toolTimeoutMs: 300_000 });
    total.dog.observe({ kind: 'waitStart' });
    total.clock.advance(600_000);
    assert.equal(total.trips[0]?.kind, 'total');
  });

  it('trips on the total time even with steady activity', () => {
    const { clock, trips, dog } = watch({ inactivityMs: 120_000, maxTotalMs: 600_000, toolTimeoutMs: 300_000 });
    for (let i = 0; i < 10; i += 1) {
      clock.advance(60_000);
      dog.observe({ kind: 'activity' });
    }
    assert.deepEqual(trips, [{ kind: 'total', limitMs: 600_000, runningMs: 600_000 }]);
  });

  it('does nothing after stop', () => {
    const { clock, trips, dog } = watch();
    dog.stop();
    clock.advance(10_000_000);
    assert.equal(trips.length, 0);
  });
});
