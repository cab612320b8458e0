// Cron tasks: each fires into its own cron engine session. A run is written to the store (intent) before it is posted
// and recorded as accepted after, so a crash in between is found on the next start and re-posted once with the same
// message id (the engine acknowledges a repeat as a duplicate); a due time is claimed when its intent is written, so it
// never fires twice. Runs missed while the daemon was down follow `scheduler.missedRuns`.
import type { Config } from '../../core/config.ts';
import { AppError, conflict, errorMessage, invalidInput, notFound } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import type { Page, PageRequest } from '../../core/page.ts';
import { pageOf } from '../../core/page.ts';
import type { CronRun, CronTask, CronTaskStore } from '../../store/cron-tasks.ts';
import type { CronExpression, DueWindow } from './cron-expression.ts';
import { dueWindow, parseCronExpression } from './cron-expression.ts';
import { cronRunText, iso } from './cron-run-text.ts';
import type { SchedulerBaseDeps } from './scheduled-run.ts';
import { abandonedError, MAX_POST_ATTEMPTS, postAndRecord, ScheduleTimer } from './scheduled-run.ts';

export interface CronSchedulerDeps extends SchedulerBaseDeps {
  store: CronTaskStore;
  config: Pick<Config, 'scheduler'>;
}

/** What `cron_add` asks for; `timezone` defaults to `scheduler.timezone`, `enabled` to true. */
export interface CronTaskInput {
  name: string;
  schedule: string;
  prompt: string;
  timezone?: string;
  enabled?: boolean;
}

/** A task with its newest run record (fired, skipped or failed), for listings. */
export interface CronTaskInfo extends CronTask {
  lastRun: CronRun | null;
}

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Fires stored cron tasks on time; see the file comment for the durability rules. */
export class CronScheduler {
  #deps: CronSchedulerDeps;
  #timer: ScheduleTimer;
  #chain: Promise<void> = Promise.resolve();
  /** Changes to the schedule (start, ticks, add, remove, enable), one at a time: each reads and writes the store in turn. */
  #changes: Promise<unknown> = Promise.resolve();
  #invalid = new Set<string>();

  constructor(deps: CronSchedulerDeps) {
    this.#deps = deps;
    this.#timer = new ScheduleTimer(deps.clock, deps.config.scheduler.maxWaitMs, () => this.#tick());
  }

  /**
   * Re-posts runs a crash left unrecorded (once; a second crash abandons them), applies the missed-run policy to
   * tasks that fell due while the daemon was down, then arms the timer. Resolves when the recovery posts are done.
   */
  async start(): Promise<void> {
    if (this.#timer.started) return;
    this.#timer.start();
    await this.#exclusive(async () => {
      await this.#recover();
      await this.#catchUp();
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
      const chain = this.#chain;
      await changes.catch(() => undefined);
      await chain;
      if (changes === this.#changes && chain === this.#chain) return;
    }
  }

  /** Runs `fn` after every schedule change queued before it; a failure rejects this call only. */
  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.#changes.catch(() => undefined).then(fn);
    this.#changes = result;
    return result;
  }

  /** Validates and stores a new task; an enabled task is scheduled at once. Throws invalid_input / conflict. */
  add(input: CronTaskInput): Promise<CronTask> {
    return this.#exclusive(() => this.#add(input));
  }

  async #add(input: CronTaskInput): Promise<CronTask> {
    const { store, clock, config } = this.#deps;
    const name = input.name.trim();
    if (!NAME_RE.test(name))
      throw invalidInput('name: use 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit', 'name');
    if (await store.resolve(name))
      throw conflict(`a cron task named "${name}" already exists (remove it first, or pick another name)`);
    const prompt = input.prompt.trim();
    if (!prompt) throw invalidInput('prompt: must not be empty', 'prompt');
    const now = clock.now();
    const timezone = input.timezone?.trim() || undefined;
    const expr = parseCronExpression(input.schedule, timezone ?? config.scheduler.timezone, now);
    const enabled = input.enabled ?? true;
    const task: CronTask = {
      id: newId(),
      name,
      schedule: expr.expression,
      timezone: timezone ?? null,
      prompt,
      enabled,
      createdAt: now,
      updatedAt: now,
      lastRunAt: null,
      lastDueAt: null,
      nextRunAt: enabled ? expr.next(now) : null,
    };
    await store.insert(task);
    this.#deps.logger.info(
      { task: task.id, name, schedule: task.schedule, timezone: task.timezone, nextRunAt: task.nextRunAt },
      'cron task added',
    );
    await this.#arm();
    return task;
  }

  /** One page of tasks, newest first, each with its newest run (read for the page's tasks only). */
  async page(request: PageRequest): Promise<Page<CronTaskInfo>> {
    const page = pageOf(await this.#deps.store.list(), request, (task) => [task.createdAt, task.id]);
    return { items: await this.#withLastRun(page.items), nextCursor: page.nextCursor };
  }

  /** Every task with its newest run, oldest task first. */
  async list(): Promise<CronTaskInfo[]> {
    return this.#withLastRun(await this.#deps.store.list());
  }

  /** The task with this id or name, with its newest runs. Throws not_found. */
  async get(ref: string, runs = 10): Promise<CronTask & { runs: CronRun[] }> {
    const task = await this.#require(ref);
    return { ...task, runs: await this.#deps.store.runs(task.id, runs) };
  }

  /** Deletes a task (its cron session stays in the engine). Resolves to the removed task. Throws not_found. */
  remove(ref: string): Promise<CronTask> {
    return this.#exclusive(async () => {
      const task = await this.#require(ref);
      await this.#deps.store.delete(task.id);
      this.#invalid.delete(task.id);
      this.#deps.logger.info({ task: task.id, name: task.name }, 'cron task removed');
      await this.#arm();
      return task;
    });
  }

  /** Enables (next due time from now: no catch-up for the time it was off) or disables a task. Throws not_found. */
  setEnabled(ref: string, enabled: boolean): Promise<CronTask> {
    return this.#exclusive(async () => {
      const task = await this.#require(ref);
      const now = this.#deps.clock.now();
      const next = enabled ? (this.#expression(task)?.next(now) ?? null) : null;
      if (enabled && next === null)
        throw invalidInput(
          `schedule: the task "${task.name}" cannot be enabled: its schedule no longer parses or never fires`,
          'schedule',
        );
      await this.#deps.store.setEnabled(task.id, enabled, next, now);
      this.#deps.logger.info(
        { task: task.id, name: task.name, enabled, nextRunAt: next },
        enabled ? 'cron task enabled' : 'cron task disabled',
      );
      await this.#arm();
      return this.#require(task.id);
    });
  }

  /** Each task with its newest run record. */
  async #withLastRun(tasks: CronTask[]): Promise<CronTaskInfo[]> {
    const out: CronTaskInfo[] = [];
    for (const task of tasks) out.push({ ...task, lastRun: (await this.#deps.store.runs(task.id, 1))[0] ?? null });
    return out;
  }

  async #require(ref: string): Promise<CronTask> {
    const task = await this.#deps.store.resolve(ref.trim());
    if (!task) throw notFound(`no cron task "${ref}" (give its id or name; cron_list shows them)`);
    return task;
  }

  /** The parsed expression of a stored task, or null (logged once) when it no longer parses (e.g. a changed default zone). */
  #expression(task: CronTask): CronExpression | null {
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

  async #recover(): Promise<void> {
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
      this.#enqueuePost(task, { ...run, attempts: run.attempts + 1 });
    }
  }

  /** Tasks whose next due time passed while the daemon was down: apply the missed-run policy, once per task. */
  async #catchUp(): Promise<void> {
    const now = this.#deps.clock.now();
    for (const task of await this.#deps.store.list()) {
      if (!task.enabled) continue;
      const expr = this.#expression(task);
      if (!expr) {
        await this.#deps.store.setNextRun(task.id, null);
        continue;
      }
      if (task.nextRunAt === null || task.nextRunAt > now) {
        // Recomputed from now: the expression or the default time zone may have changed since it was stored.
        await this.#deps.store.setNextRun(task.id, expr.next(now));
        continue;
      }
      const window = dueWindow(expr, Math.max(task.lastDueAt ?? -Infinity, task.nextRunAt - 1), now);
      if (!window) {
        await this.#deps.store.setNextRun(task.id, expr.next(now));
        continue;
      }
      await this.#missed(task, expr, window, now);
    }
  }

  async #missed(task: CronTask, expr: CronExpression, window: DueWindow, now: number): Promise<void> {
    const { store, logger, config } = this.#deps;
    const policy = config.scheduler.missedRuns;
    const details = {
      task: task.id,
      name: task.name,
      missed: window.count,
      capped: window.capped,
      firstDueAt: iso(window.first),
      lastDueAt: iso(window.last),
      policy,
    };
    if (policy === 'skip') {
      await store.recordMissed(
        {
          taskId: task.id,
          firstDueAt: window.first,
          lastDueAt: window.last,
          count: window.count,
          messageId: `cron-${task.id}-${window.last}-missed`,
          now,
          nextRunAt: expr.next(now),
        },
        config.scheduler.keepRuns,
      );
      logger.warn(details, 'cron runs missed while the daemon was down were skipped (scheduler.missedRuns = skip)');
      return;
    }
    logger.warn(
      details,
      'cron runs were missed while the daemon was down; making one catch-up run (scheduler.missedRuns = run-once)',
    );
    await this.#begin(task, window.last, 'catch-up', window, expr.next(now));
  }

  /** Sets the timer for the earliest due time of an enabled task. */
  #arm(): Promise<void> {
    return this.#timer.arm(async () => {
      let next = Infinity;
      for (const task of await this.#deps.store.list())
        if (task.enabled && task.nextRunAt !== null && task.nextRunAt < next) next = task.nextRunAt;
      return next === Infinity ? null : next;
    });
  }

  /** The timer fired: fires what is due at this moment, after the schedule changes queued before it. */
  #tick(): void {
    if (this.#timer.stopped) return;
    const now = this.#deps.clock.now();
    this.#exclusive(() => this.#fireDue(now)).catch((error: unknown) => {
      this.#deps.logger.error(
        { err: errorMessage(error) },
        'cron tick failed; the timer tries again within scheduler.maxWaitMs',
      );
      this.#exclusive(() => this.#arm()).catch((armError: unknown) =>
        this.#deps.logger.error({ err: errorMessage(armError) }, 'cron timer could not be re-armed'),
      );
    });
  }

  /** Fires every task due at `now`, in due-time order (then creation order), and re-arms. */
  async #fireDue(now: number): Promise<void> {
    if (this.#timer.stopped) return;
    const due = (await this.#deps.store.list())
      .filter((t) => t.enabled && t.nextRunAt !== null && t.nextRunAt <= now)
      .sort((a, b) => (a.nextRunAt as number) - (b.nextRunAt as number) || a.createdAt - b.createdAt);
    for (const task of due) {
      const expr = this.#expression(task);
      if (!expr) {
        await this.#deps.store.setNextRun(task.id, null);
        continue;
      }
      const window = dueWindow(expr, Math.max(task.lastDueAt ?? -Infinity, (task.nextRunAt as number) - 1), now);
      if (!window) {
        await this.#deps.store.setNextRun(task.id, expr.next(now));
        continue;
      }
      if (window.count === 1) {
        await this.#begin(task, window.first, 'scheduled', null, expr.next(now));
        continue;
      }
      // The timer woke late across several due times (the machine slept): the latest is this run; the earlier ones
      // were missed and follow the policy.
      const earlier = dueWindow(expr, window.first - 1, window.last - 1);
      if (earlier && this.#deps.config.scheduler.missedRuns === 'skip') {
        await this.#deps.store.recordMissed(
          {
            taskId: task.id,
            firstDueAt: earlier.first,
            lastDueAt: earlier.last,
            count: earlier.count,
            messageId: `cron-${task.id}-${earlier.last}-missed`,
            now,
            nextRunAt: task.nextRunAt,
          },
          this.#deps.config.scheduler.keepRuns,
        );
        this.#deps.logger.warn(
          { task: task.id, name: task.name, missed: earlier.count },
          'cron timer woke late; earlier due times skipped (scheduler.missedRuns = skip)',
        );
        await this.#begin(task, window.last, 'scheduled', null, expr.next(now));
      } else {
        await this.#begin(task, window.last, 'catch-up', earlier ?? null, expr.next(now));
      }
    }
    await this.#arm();
  }

  /** Writes the intent of a run (claiming its due time) and queues its post. */
  async #begin(
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
    this.#enqueuePost(task, run);
  }

  /** Posts runs one after another, in the order they were begun. */
  #enqueuePost(task: CronTask, run: CronRun): void {
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
