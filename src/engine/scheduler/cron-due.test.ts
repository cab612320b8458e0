import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CRON_T0 as T0, cronTask as task } from '../../../test/support/cron-task.ts';
import { dueTasks, earliestDue, startStep, tickStep } from './cron-due.ts';
import { parseCronExpression } from './cron-expression.ts';

const MIN = 60_000;
const H = 60 * MIN;
const hourly = parseCronExpression('0 * * * *', 'UTC', T0);

describe('cron-due', () => {
  it('lists the enabled tasks due now by due time, then creation order, and finds the earliest due time', () => {
    const tasks = [
      task({ id: 'late', nextRunAt: T0 + 2 * H, createdAt: T0 }),
      task({ id: 'b', nextRunAt: T0 + H, createdAt: T0 + 2 }),
      task({ id: 'a', nextRunAt: T0 + H, createdAt: T0 + 1 }),
      task({ id: 'off', nextRunAt: T0, enabled: false }),
      task({ id: 'never', nextRunAt: null }),
      task({ id: 'future', nextRunAt: T0 + 3 * H }),
    ];
    assert.deepEqual(
      dueTasks(tasks, T0 + 2 * H).map((t) => t.id),
      ['a', 'b', 'late'],
    );
    assert.deepEqual(dueTasks(tasks, T0 + H - 1), []);
    assert.equal(earliestDue(tasks), T0 + H);
    assert.equal(earliestDue([task({ enabled: false }), task({ nextRunAt: null })]), null);
  });

  it('at start: reschedules what is not due (from now), skips or catches up what was missed', () => {
    const now = T0 + 3 * H + 30 * MIN;
    assert.deepEqual(startStep(task({ nextRunAt: now + H }), hourly, now, 'run-once'), {
      kind: 'reschedule',
      nextRunAt: T0 + 4 * H,
    });
    assert.deepEqual(startStep(task({ nextRunAt: null }), hourly, now, 'skip'), {
      kind: 'reschedule',
      nextRunAt: T0 + 4 * H,
    });
    assert.deepEqual(startStep(task(), null, now, 'run-once'), { kind: 'reschedule', nextRunAt: null });
    const missed = { count: 3, capped: false, first: T0 + H, last: T0 + 3 * H };
    assert.deepEqual(startStep(task(), hourly, now, 'skip'), { kind: 'skip', missed, nextRunAt: T0 + 4 * H });
    assert.deepEqual(startStep(task(), hourly, now, 'run-once'), { kind: 'catch-up', missed, nextRunAt: T0 + 4 * H });
    // The last due time handled bounds the window: nothing at or before it comes back.
    assert.deepEqual(startStep(task({ lastDueAt: T0 + 3 * H }), hourly, now, 'run-once'), {
      kind: 'reschedule',
      nextRunAt: T0 + 4 * H,
    });
  });

  it('at a tick: runs the one due time, or the latest after a late wake with the earlier ones skipped or named', () => {
    const due = { ...task(), nextRunAt: T0 + H };
    assert.deepEqual(tickStep(due, hourly, T0 + H, 'skip'), {
      kind: 'run',
      dueAt: T0 + H,
      runKind: 'scheduled',
      missed: null,
      nextRunAt: T0 + 2 * H,
    });
    const late = T0 + 3 * H + 5 * MIN;
    const earlier = { count: 2, capped: false, first: T0 + H, last: T0 + 2 * H };
    assert.deepEqual(tickStep(due, hourly, late, 'skip'), {
      kind: 'skip-then-run',
      skipped: earlier,
      dueAt: T0 + 3 * H,
      nextRunAt: T0 + 4 * H,
    });
    assert.deepEqual(tickStep(due, hourly, late, 'run-once'), {
      kind: 'run',
      dueAt: T0 + 3 * H,
      runKind: 'catch-up',
      missed: earlier,
      nextRunAt: T0 + 4 * H,
    });
    assert.deepEqual(tickStep({ ...due, lastDueAt: T0 + H }, hourly, T0 + H, 'run-once'), {
      kind: 'reschedule',
      nextRunAt: T0 + 2 * H,
    });
    assert.deepEqual(tickStep(due, null, T0 + H, 'run-once'), { kind: 'reschedule', nextRunAt: null });
  });
});
