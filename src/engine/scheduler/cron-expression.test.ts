import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../core/errors.ts';
import { dueWindow, parseCronExpression } from './cron-expression.ts';

const T0 = Date.UTC(2026, 0, 1, 0, 0, 0);
const H = 3_600_000;

function rejects(expression: string, timezone: string | undefined, field: string, pattern: RegExp): void {
  assert.throws(
    () => parseCronExpression(expression, timezone, T0),
    (error: unknown) => {
      assert.ok(error instanceof AppError);
      assert.equal(error.kind, 'invalid_input');
      assert.equal(error.field, field);
      assert.match(error.message, pattern);
      return true;
    },
  );
}

describe('cron expressions', () => {
  it('accepts 5 fields and nicknames, and computes the next due time strictly after a time', () => {
    const daily = parseCronExpression('0 9 * * *', 'UTC', T0);
    assert.equal(daily.next(T0), T0 + 9 * H);
    assert.equal(daily.next(T0 + 9 * H), T0 + 33 * H);
    assert.equal(daily.previous(T0 + 9 * H), T0 + 9 * H);
    assert.equal(parseCronExpression('  */15   * * * * ', 'UTC', T0).expression, '*/15 * * * *');
    assert.equal(parseCronExpression('@hourly', 'UTC', T0).next(T0), T0 + H);
  });

  it('reads the expression in the given time zone', () => {
    // 09:00 in Paris is 08:00 UTC in January.
    assert.equal(parseCronExpression('0 9 * * *', 'Europe/Paris', T0).next(T0), T0 + 8 * H);
  });

  it('rejects wrong expressions and time zones, naming the field', () => {
    rejects('* * * * * *', 'UTC', 'schedule', /6 fields; give 5 .*seconds are not supported/);
    rejects('0 9 * *', 'UTC', 'schedule', /4 fields/);
    rejects('61 * * * *', 'UTC', 'schedule', /not a valid cron expression: Invalid value for minute: 61/);
    rejects('0 9 * * xyz', 'UTC', 'schedule', /not a valid cron expression/);
    rejects('@reboot', 'UTC', 'schedule', /unknown nickname @reboot/);
    rejects('0 0 30 2 *', 'UTC', 'schedule', /never fires/);
    rejects('0 9 * * *', 'Mars/Olympus', 'timezone', /not an IANA time zone/);
  });

  it('lists the due times of a window, capping long counts but keeping the exact last one', () => {
    const hourly = parseCronExpression('0 * * * *', 'UTC', T0);
    assert.equal(dueWindow(hourly, T0, T0 + H - 1), null);
    assert.deepEqual(dueWindow(hourly, T0, T0 + 5 * H), { count: 5, capped: false, first: T0 + H, last: T0 + 5 * H });
    const minutely = parseCronExpression('* * * * *', 'UTC', T0);
    assert.deepEqual(dueWindow(minutely, T0, T0 + 30 * 24 * H, 100), {
      count: 100,
      capped: true,
      first: T0 + 60_000,
      last: T0 + 30 * 24 * H,
    });
  });
});
