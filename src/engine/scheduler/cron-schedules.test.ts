import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { captureLogger } from '../../../test/support/capture-logger.ts';
import { CRON_T0 as T0, cronTask } from '../../../test/support/cron-task.ts';
import { ManualClock } from '../../core/clock.ts';
import type { CronTask } from '../../store/cron-tasks.ts';
import { CronSchedules } from './cron-schedules.ts';

const H = 3_600_000;

const task = (fields: Partial<CronTask> = {}): CronTask => cronTask({ nextRunAt: null, ...fields });

describe('CronSchedules', () => {
  it('reads a task in its own zone, or the default one', () => {
    const clock = new ManualClock(T0);
    const log = captureLogger();
    const schedules = new CronSchedules({ clock, logger: log.logger, config: { scheduler: { timezone: 'UTC' } } });
    assert.equal(schedules.of(task())?.timezone, 'UTC');
    const paris = schedules.of(task({ schedule: '0 9 * * *', timezone: 'Europe/Paris' }));
    assert.equal(paris?.next(T0), T0 + 8 * H);
    assert.equal(log.lines.length, 0);
  });

  it('logs a schedule that no longer parses once per task, again after it parsed or was forgotten', () => {
    const clock = new ManualClock(T0);
    const log = captureLogger();
    const config = { scheduler: { timezone: 'UTC' } };
    const schedules = new CronSchedules({ clock, logger: log.logger, config });
    const broken = task({ timezone: 'Not/AZone' });
    const logged = (): number => log.find('error', /invalid schedule; it does not run/).length;
    assert.equal(schedules.of(broken), null);
    clock.advance(H);
    assert.equal(schedules.of(broken), null);
    assert.equal(logged(), 1);
    assert.equal(log.find('error', /invalid schedule/)[0]?.task, 't1');
    schedules.forget('t1');
    assert.equal(schedules.of(broken), null);
    assert.equal(logged(), 2);
    assert.ok(schedules.of(task()));
    assert.equal(schedules.of(broken), null);
    assert.equal(logged(), 3);
    // Another task is logged on its own.
    assert.equal(schedules.of({ ...broken, id: 't2' }), null);
    assert.equal(logged(), 4);
  });
});
