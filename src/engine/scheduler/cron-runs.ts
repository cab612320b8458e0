// The durable life of one cron run: its intent is written to the store (claiming its due time) before it is posted to
// the task's cron session, and its outcome is recorded after; a run a crash left unrecorded is posted again on the next
// start under the same message id (once: a second crash abandons it). Posts go out one after another, in order begun.
import type { Config } from '../../core/config.ts';
import { errorMessage } from '../../core/errors.ts';
import type { CronRun, CronTask, CronTaskStore } from '../../store/cron-tasks.ts';
import type { DueWindow } from './cron-expression.ts';
import { cronRunText, iso } from './cron-run-text.ts';
import type { SchedulerBaseDeps } from './scheduled-run.ts';
import { abandonedError, MAX_POST_ATTEMPTS, postAndRecord } from './scheduled-run.ts';

/** What the runs are written to, posted to and logged with; `keepRuns` trims each task's history. */
export interface CronRunsDeps extends SchedulerBaseDeps {
  store: Pick<
    CronTaskStore,
    'beginRun' | 'setNextRun' | 'finishRun' | 'failRun' | 'retryRun' | 'unfinishedRuns' | 'resolve'
  >;
  config: { scheduler: Pick<Config['scheduler'], 'keepRuns'> };
}

/** Begins, posts and records cron runs, and recovers the runs a crash left unrecorded. */
export class CronRuns {
  #deps: CronRunsDeps;
  #chain: Promise<void> = Promise.resolve();

  constructor(deps: CronRunsDeps) {
    this.#deps = deps;
  }

  /** The posts queued so far; resolves once each is recorded (or its failure to record is logged). Never rejects. */
  get posting(): Promise<void> {
    return this.#chain;
  }

  /** Queues again the runs a crash left unrecorded (once; a run already tried `MAX_POST_ATTEMPTS` times is abandoned). */
  async recover(): Promise<void> {
    const { store, logger, clock } = this.#deps;
    for (const run of await store.unfinishedRuns()) {
      const task = await store.resolve(run.taskId);
      if (!task) continue;
      if (run.attempts >= MAX_POST_ATTEMPTS) {
        await store.failRun(
          run,
          'abandoned',
          abandonedError(run.attempts),
          clock.now(),
          this.#deps.config.scheduler.keepRuns,
        );
        logger.error(
          { task: task.id, name: task.name, dueAt: iso(run.dueAt), attempts: run.attempts },
          'cron run abandoned after repeated crashes while posting it',
        );
        continue;
      }
      await store.retryRun(run.id);
      logger.warn(
        { task: task.id, name: task.name, dueAt: iso(run.dueAt) },
        'cron run was not recorded before the daemon stopped; posting it again (a repeat is recognized by its message id)',
      );
      this.#enqueue(task, { ...run, attempts: run.attempts + 1 });
    }
  }

  /**
   * Writes the intent of a run due at `dueAt` (claiming the due time, and moving the task on to `nextRunAt`) and queues
   * its post; a catch-up run names the due times it stands for in `missed`. A due time already handled is not fired
   * again: the task only moves on. Resolves once the intent is stored (not the post: see `posting`).
   */
  async begin(
    task: CronTask,
    dueAt: number,
    kind: 'scheduled' | 'catch-up',
    missed: DueWindow | null,
    nextRunAt: number | null,
  ): Promise<void> {
    const { store, clock, logger } = this.#deps;
    const run = await store.beginRun({
      taskId: task.id,
      dueAt,
      kind,
      missed: missed?.count ?? 0,
      firstMissedAt: missed?.first ?? null,
      prompt: cronRunText(task, dueAt, missed ?? undefined),
      messageId: `cron-${task.id}-${dueAt}`,
      now: clock.now(),
      nextRunAt,
    });
    if (!run) {
      // Already fired (or skipped) for this due time: move on without firing again.
      logger.debug({ task: task.id, dueAt: iso(dueAt) }, 'cron due time already handled; not fired again');
      await store.setNextRun(task.id, nextRunAt);
      return;
    }
    this.#enqueue(task, run);
  }

  /** Posts runs one after another, in the order they were begun. */
  #enqueue(task: CronTask, run: CronRun): void {
    this.#chain = this.#chain.then(() => this.#post(task, run));
  }

  /** Posts a run and records the outcome; a failure to record it is logged, and the next start posts the run again. */
  async #post(task: CronTask, run: CronRun): Promise<void> {
    const { engine, store, clock, logger, config } = this.#deps;
    try {
      await postAndRecord(
        engine,
        {
          target: { type: 'cron', id: task.id },
          origin: `cron:${task.name}`,
          prompt: run.prompt,
          messageId: run.messageId,
        },
        {
          accepted: async (accepted) => {
            await store.finishRun(
              run,
              { sessionId: accepted.sessionId, duplicate: accepted.duplicate, now: clock.now() },
              config.scheduler.keepRuns,
            );
            logger.info(
              {
                task: task.id,
                name: task.name,
                dueAt: iso(run.dueAt),
                kind: run.kind,
                session: accepted.sessionId,
                duplicate: accepted.duplicate,
              },
              accepted.duplicate ? 'cron run was already accepted before the restart; recorded' : 'cron run posted',
            );
          },
          refused: async (error) => {
            await store.failRun(run, 'failed', errorMessage(error), clock.now(), config.scheduler.keepRuns);
            logger.error(
              { task: task.id, name: task.name, dueAt: iso(run.dueAt), err: errorMessage(error) },
              'cron run could not be posted to the engine',
            );
          },
        },
      );
    } catch (error) {
      logger.error(
        { task: task.id, name: task.name, dueAt: iso(run.dueAt), err: errorMessage(error) },
        'cron run outcome could not be recorded; it stays unfinished and the next start posts it again (a repeat is recognized by its message id)',
      );
    }
  }
}
