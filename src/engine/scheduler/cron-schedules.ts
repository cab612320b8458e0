// The parsed schedule of each stored cron task: its expression read in its own time zone or the scheduler's default.
// A stored schedule that no longer parses (e.g. the default zone changed) is logged once per task, not at every tick.
import type { Clock } from '../../core/clock.ts';
import type { Config } from '../../core/config.ts';
import { AppError, errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { CronTask } from '../../store/cron-tasks.ts';
import type { CronExpression } from './cron-expression.ts';
import { parseCronExpression } from './cron-expression.ts';

/** What the stored schedules are read with: the clock, the logger and the default time zone. */
export interface CronSchedulesDeps {
  clock: Clock;
  logger: Logger;
  config: { scheduler: Pick<Config['scheduler'], 'timezone'> };
}

/** Parses stored tasks' schedules, remembering which tasks were reported invalid so each is logged once. */
export class CronSchedules {
  #deps: CronSchedulesDeps;
  #invalid = new Set<string>();

  constructor(deps: CronSchedulesDeps) {
    this.#deps = deps;
  }

  /** The parsed expression of a stored task, or null (logged once) when it no longer parses or never fires. */
  of(task: CronTask): CronExpression | null {
    try {
      const expr = parseCronExpression(
        task.schedule,
        task.timezone ?? this.#deps.config.scheduler.timezone,
        this.#deps.clock.now(),
      );
      this.#invalid.delete(task.id);
      return expr;
    } catch (error) {
      if (!this.#invalid.has(task.id)) {
        this.#invalid.add(task.id);
        this.#deps.logger.error(
          { task: task.id, name: task.name, err: error instanceof AppError ? error.message : errorMessage(error) },
          'cron task has an invalid schedule; it does not run',
        );
      }
      return null;
    }
  }

  /** Forgets a removed task (a new task may reuse nothing of it). */
  forget(taskId: string): void {
    this.#invalid.delete(taskId);
  }
}
