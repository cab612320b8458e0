// Cron tasks: each fires into its own cron engine session. A run is written to the store (intent) before it is posted
// and recorded as accepted after, so a crash in between is found on the next start and re-posted once with the same
// message id (the engine acknowledges a repeat as a duplicate); a due time is claimed when its intent is written, so it
// never fires twice. Runs missed while the daemon was down follow `scheduler.missedRuns`.
//
// The scheduler is a composition: `cron-task-admin.ts` (add, list, remove, enable), `cron-schedules.ts` (each stored
// task's parsed expression), `cron-due.ts` (schedule arithmetic), `cron-firing.ts` (the start's catch-up and the
// tick's pass over due tasks) and `cron-runs.ts` (a run's intent, post and outcome, and recovery). It owns the timer
// and runs the schedule changes one at a time.
import type { Config } from '../../core/config.ts';
import { errorMessage } from '../../core/errors.ts';
import type { Page, PageRequest } from '../../core/page.ts';
import type { CronRun, CronTask, CronTaskStore } from '../../store/cron-tasks.ts';
import { earliestDue } from './cron-due.ts';
import { CronFiring } from './cron-firing.ts';
import { CronRuns } from './cron-runs.ts';
import { CronSchedules } from './cron-schedules.ts';
import type { CronTaskInfo, CronTaskInput } from './cron-task-admin.ts';
import { CronTaskAdmin } from './cron-task-admin.ts';
import type { SchedulerBaseDeps } from './scheduled-run.ts';
import { ScheduleTimer } from './scheduled-run.ts';

export type { CronTaskInfo, CronTaskInput } from './cron-task-admin.ts';

/** What the cron scheduler is built on: the task store, the engine, the clock, the logger and `scheduler` config. */
export interface CronSchedulerDeps extends SchedulerBaseDeps {
  store: CronTaskStore;
  config: Pick<Config, 'scheduler'>;
}

/** Fires stored cron tasks on time; see the file comment for the durability rules. */
export class CronScheduler {
  #deps: CronSchedulerDeps;
  #timer: ScheduleTimer;
  #admin: CronTaskAdmin;
  #runs: CronRuns;
  #firing: CronFiring;
  /** Changes to the schedule (start, ticks, add, remove, enable), one at a time: each reads and writes the store in turn. */
  #changes: Promise<unknown> = Promise.resolve();

  constructor(deps: CronSchedulerDeps) {
    this.#deps = deps;
    this.#timer = new ScheduleTimer(deps.clock, deps.config.scheduler.maxWaitMs, () => this.#tick());
    const { store, engine, clock, logger, config } = deps;
    const schedules = new CronSchedules({ clock, logger, config });
    this.#admin = new CronTaskAdmin({ store, schedules, clock, logger, config, changed: () => this.#arm() });
    this.#runs = new CronRuns({ store, engine, clock, logger, config });
    this.#firing = new CronFiring({ store, schedules, runs: this.#runs, clock, logger, config });
  }

  /**
   * Re-posts runs a crash left unrecorded (once; a second crash abandons them), applies the missed-run policy to
   * tasks that fell due while the daemon was down, then arms the timer. Resolves when the recovery posts are done.
   */
  async start(): Promise<void> {
    if (this.#timer.started) return;
    this.#timer.start();
    await this.#exclusive(async () => {
      await this.#runs.recover();
      await this.#firing.catchUp();
      await this.#arm();
    });
    await this.idle();
  }

  /**
   * Cluster: sets the timer again from the stored tasks (tasks added, changed or removed on another node; only the node
   * serving the scheduler runs them). A no-op unless started.
   */
  rearm(): Promise<void> {
    return this.#exclusive(() => this.#arm());
  }

  /** Stops the timer and waits for posts in flight to be recorded. */
  async stop(): Promise<void> {
    this.#timer.stop();
    await this.idle();
  }

  /** Resolves once every schedule change and every post queued so far is done (posts recorded). */
  async idle(): Promise<void> {
    for (;;) {
      const changes = this.#changes;
      const posting = this.#runs.posting;
      await changes.catch(() => undefined);
      await posting;
      if (changes === this.#changes && posting === this.#runs.posting) return;
    }
  }

  /** Validates and stores a new task; an enabled task is scheduled at once. Throws invalid_input / conflict. */
  add(input: CronTaskInput): Promise<CronTask> {
    return this.#exclusive(() => this.#admin.add(input));
  }

  /** One page of tasks, newest first, each with its newest run (read for the page's tasks only). */
  page(request: PageRequest): Promise<Page<CronTaskInfo>> {
    return this.#admin.page(request);
  }

  /** Every task with its newest run, oldest task first. */
  list(): Promise<CronTaskInfo[]> {
    return this.#admin.list();
  }

  /** The task with this id or name, with its newest runs. Throws not_found. */
  get(ref: string, runs = 10): Promise<CronTask & { runs: CronRun[] }> {
    return this.#admin.get(ref, runs);
  }

  /** Deletes a task (its cron session stays in the engine). Resolves to the removed task. Throws not_found. */
  remove(ref: string): Promise<CronTask> {
    return this.#exclusive(() => this.#admin.remove(ref));
  }

  /** Enables (next due time from now: no catch-up for the time it was off) or disables a task. Throws not_found. */
  setEnabled(ref: string, enabled: boolean): Promise<CronTask> {
    return this.#exclusive(() => this.#admin.setEnabled(ref, enabled));
  }

  /** Runs `fn` after every schedule change queued before it; a failure rejects this call only. */
  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.#changes.catch(() => undefined).then(fn);
    this.#changes = result;
    return result;
  }

  /** Sets the timer for the earliest due time of an enabled task. */
  #arm(): Promise<void> {
    return this.#timer.arm(async () => earliestDue(await this.#deps.store.list()));
  }

  /** The timer fired: fires what is due at this moment, after the schedule changes queued before it, and re-arms. */
  #tick(): void {
    if (this.#timer.stopped) return;
    const now = this.#deps.clock.now();
    this.#exclusive(async () => {
      if (this.#timer.stopped) return;
      await this.#firing.fireDue(now);
      await this.#arm();
    }).catch((error: unknown) => {
      this.#deps.logger.error(
        { err: errorMessage(error) },
        'cron tick failed; the timer tries again within scheduler.maxWaitMs',
      );
      this.#exclusive(() => this.#arm()).catch((armError: unknown) =>
        this.#deps.logger.error({ err: errorMessage(armError) }, 'cron timer could not be re-armed'),
      );
    });
  }
}
