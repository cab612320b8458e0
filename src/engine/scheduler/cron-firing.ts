// One pass over the stored cron tasks, carrying out the steps `cron-due.ts` works out: at start, the runs missed while
// the daemon was down (scheduler.missedRuns); at a timer tick, every task due now. Runs are begun through `CronRuns`
// (the due time claimed before the post); skipped due times are recorded in the task's run history.
import type { Clock } from '../../core/clock.ts';
import type { Config } from '../../core/config.ts';
import type { Logger } from '../../core/logger.ts';
import type { CronTask, CronTaskStore } from '../../store/cron-tasks.ts';
import { dueTasks, startStep, tickStep } from './cron-due.ts';
import type { DueWindow } from './cron-expression.ts';
import { iso } from './cron-run-text.ts';
import type { CronRuns } from './cron-runs.ts';
import type { CronSchedules } from './cron-schedules.ts';

/** What a pass reads and writes: the tasks, their parsed schedules, the runs it begins, the policy and history size. */
export interface CronFiringDeps {
  store: Pick<CronTaskStore, 'list' | 'setNextRun' | 'recordMissed'>;
  schedules: Pick<CronSchedules, 'of'>;
  runs: Pick<CronRuns, 'begin'>;
  clock: Clock;
  logger: Logger;
  config: { scheduler: Pick<Config['scheduler'], 'missedRuns' | 'keepRuns'> };
}

/** Fires what is due: the missed runs at start (`catchUp`) and the due tasks at a tick (`fireDue`). */
export class CronFiring {
  #deps: CronFiringDeps;

  constructor(deps: CronFiringDeps) {
    this.#deps = deps;
  }

  /** Tasks whose next due time passed while the daemon was down: apply the missed-run policy, once per task. */
  async catchUp(): Promise<void> {
    const { store, schedules, runs, clock, config } = this.#deps;
    const now = clock.now();
    for (const task of await store.list()) {
      if (!task.enabled) continue;
      const step = startStep(task, schedules.of(task), now, config.scheduler.missedRuns);
      switch (step.kind) {
        case 'reschedule':
          await store.setNextRun(task.id, step.nextRunAt);
          break;
        case 'skip':
          await this.#recordMissed(task, step.missed, now, step.nextRunAt);
          this.#deps.logger.warn(
            this.#missedDetails(task, step.missed),
            'cron runs missed while the daemon was down were skipped (scheduler.missedRuns = skip)',
          );
          break;
        case 'catch-up':
          this.#deps.logger.warn(
            this.#missedDetails(task, step.missed),
            'cron runs were missed while the daemon was down; making one catch-up run (scheduler.missedRuns = run-once)',
          );
          await runs.begin(task, step.missed.last, 'catch-up', step.missed, step.nextRunAt);
          break;
        default:
          step satisfies never;
      }
    }
  }

  /** Fires every task due at `now`, in due-time order (then creation order). */
  async fireDue(now: number): Promise<void> {
    const { store, schedules, runs, config } = this.#deps;
    for (const task of dueTasks(await store.list(), now)) {
      const step = tickStep(task, schedules.of(task), now, config.scheduler.missedRuns);
      switch (step.kind) {
        case 'reschedule':
          await store.setNextRun(task.id, step.nextRunAt);
          break;
        case 'run':
          await runs.begin(task, step.dueAt, step.runKind, step.missed, step.nextRunAt);
          break;
        case 'skip-then-run':
          await this.#recordMissed(task, step.skipped, now, task.nextRunAt);
          this.#deps.logger.warn(
            { task: task.id, name: task.name, missed: step.skipped.count },
            'cron timer woke late; earlier due times skipped (scheduler.missedRuns = skip)',
          );
          await runs.begin(task, step.dueAt, 'scheduled', null, step.nextRunAt);
          break;
        default:
          step satisfies never;
      }
    }
  }

  /** Records the due times of `window` as skipped in the task's run history; the task's next run becomes `nextRunAt`. */
  #recordMissed(task: CronTask, window: DueWindow, now: number, nextRunAt: number | null): Promise<void> {
    return this.#deps.store.recordMissed(
      {
        taskId: task.id,
        firstDueAt: window.first,
        lastDueAt: window.last,
        count: window.count,
        messageId: `cron-${task.id}-${window.last}-missed`,
        now,
        nextRunAt,
      },
      this.#deps.config.scheduler.keepRuns,
    );
  }

  /** The log fields of runs missed while the daemon was down. */
  #missedDetails(task: CronTask, window: DueWindow): Record<string, unknown> {
    return {
      task: task.id,
      name: task.name,
      missed: window.count,
      capped: window.capped,
      firstDueAt: iso(window.first),
      lastDueAt: iso(window.last),
      policy: this.#deps.config.scheduler.missedRuns,
    };
  }
}
