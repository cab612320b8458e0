// Cron expressions through croner: validation with errors naming the field, next due time, and the due times that
// fell in a window (runs missed while the daemon was down).
import { Cron } from 'croner';
import { isTimeZone } from '../../core/config-engine.ts';
import { errorMessage, invalidInput } from '../../core/errors.ts';

/** A parsed, valid cron expression with the time zone it is read in. */
export interface CronExpression {
  readonly expression: string;
  readonly timezone: string | undefined;
  /** The first due time strictly after `after` (epoch ms), or null when it never fires again. */
  next(after: number): number | null;
  /** The last due time at or before `at`, or null when there is none. */
  previous(at: number): number | null;
}

/** Due times in a window: how many, the first and the last (`count` stops at `limit`; `last` is exact either way). */
export interface DueWindow {
  count: number;
  /** True when there were more than `limit` due times (count is then `limit`). */
  capped: boolean;
  first: number;
  last: number;
}

const NICKNAMES = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

/**
 * Parses a 5-field cron expression (minute hour day-of-month month day-of-week) or a nickname (@hourly, @daily,
 * @weekly, @monthly, @yearly), read in `timezone` (IANA name; default: the machine's local time). Throws invalid_input
 * naming `schedule` or `timezone` when either is wrong, or when the expression never fires after `now`.
 */
export function parseCronExpression(expression: string, timezone: string | undefined, now: number): CronExpression {
  const text = expression.trim().replace(/\s+/g, ' ');
  if (timezone !== undefined && !isTimeZone(timezone)) {
    throw invalidInput(
      `timezone: "${timezone}" is not an IANA time zone (e.g. "Europe/Paris", "America/New_York", "UTC")`,
      'timezone',
    );
  }
  if (text.startsWith('@') && !NICKNAMES.has(text.toLowerCase())) {
    throw invalidInput(`schedule: unknown nickname ${text} (use ${[...NICKNAMES].join(', ')} or 5 fields)`, 'schedule');
  }
  const fields = text.split(' ').length;
  if (!text.startsWith('@') && fields !== 5) {
    throw invalidInput(
      `schedule: "${text}" has ${fields} field${fields === 1 ? '' : 's'}; give 5 (minute hour day-of-month month day-of-week), e.g. "0 9 * * 1-5" (seconds are not supported)`,
      'schedule',
    );
  }
  let cron: Cron;
  try {
    cron = new Cron(text, { mode: '5-part', paused: true, ...(timezone ? { timezone } : {}) });
  } catch (error) {
    throw invalidInput(
      `schedule: "${text}" is not a valid cron expression: ${errorMessage(error).replace(/^CronPattern: /, '')}`,
      'schedule',
    );
  }
  const next = (after: number): number | null => cron.nextRun(new Date(after))?.getTime() ?? null;
  const previous = (at: number): number | null => cron.previousRuns(1, new Date(at + 1))[0]?.getTime() ?? null;
  if (next(now) === null)
    throw invalidInput(`schedule: "${text}" never fires (no matching date from now on)`, 'schedule');
  return { expression: text, timezone, next, previous };
}

/**
 * The due times of `cron` strictly after `after` and at or before `until`; null when there are none. Counts at most
 * `limit` of them (a task due every minute over a long outage is not walked one minute at a time past that).
 */
export function dueWindow(cron: CronExpression, after: number, until: number, limit = 10_000): DueWindow | null {
  const first = cron.next(after);
  if (first === null || first > until) return null;
  let count = 1;
  let last = first;
  for (;;) {
    const n = cron.next(last);
    if (n === null || n > until) return { count, capped: false, first, last };
    if (count >= limit) return { count, capped: true, first, last: cron.previous(until) ?? last };
    count += 1;
    last = n;
  }
}
