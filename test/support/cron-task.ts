// A stored cron task for the scheduler's unit tests: hourly, enabled, created at T0, never run.
import type { CronTask } from '../../src/store/cron-tasks.ts';

/** 2026-01-01T00:00:00Z, when the tasks of these tests were created. */
export const CRON_T0 = Date.UTC(2026, 0, 1, 0, 0, 0);

/** The task `t1` ("nightly", `0 * * * *`, next run an hour after T0) with `fields` changed. */
export function cronTask(fields: Partial<CronTask> = {}): CronTask {
  return {
    id: 't1',
    name: 'nightly',
    schedule: '0 * * * *',
    timezone: null,
    prompt: 'check',
    enabled: true,
    createdAt: CRON_T0,
    updatedAt: CRON_T0,
    lastRunAt: null,
    lastDueAt: null,
    nextRunAt: CRON_T0 + 3_600_000,
    ...fields,
  };
}
