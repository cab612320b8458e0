// The heartbeat: every `heartbeat.intervalMinutes`, the task list and the queued events go to the single heartbeat
// session as one batch prompt. A timer tick with nothing to send does nothing (logged at debug); an explicit run
// (wake, hook, manual) always happens, tasks or not. The cadence anchor and every run survive restarts.
import type { Transaction } from 'kysely';
import type { Config } from '../../core/config.ts';
import { conflict, errorMessage, invalidInput, notFound } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import type { HeartbeatEvent, HeartbeatRun, HeartbeatStore, HeartbeatTask } from '../../store/heartbeat-store.ts';
import type { Database } from '../../store/tables/index.ts';
import type { ExtraEvent, HeartbeatReason } from './heartbeat-prompt.ts';
import { heartbeatPrompt } from './heartbeat-prompt.ts';
import type { SchedulerBaseDeps } from './scheduled-run.ts';
import { abandonedError, MAX_POST_ATTEMPTS, postAndRecord, ScheduleTimer } from './scheduled-run.ts';

export interface HeartbeatDeps extends SchedulerBaseDeps {
  store: HeartbeatStore;
  config: Pick<Config, 'heartbeat' | 'scheduler'>;
}

/** What a run that happened reports. */
export interface HeartbeatRunResult {
  runId: number;
  sessionId: string;
  messageId: string;
  duplicate: boolean;
  tasks: number;
  events: number;
}

/** The heartbeat as listings show it. */
export interface HeartbeatStatus {
  intervalMinutes: number;
  lastRunAt: number | null;
  lastReason: string | null;
  /** When the timer runs next; null when the timer is off (intervalMinutes 0). */
  nextRunAt: number | null;
  tasks: number;
  pendingEvents: number;
  lastRun: HeartbeatRun | null;
}

/** The heartbeat service; build with the store and the engine, then `start()`. */
export class Heartbeat {
  #deps: HeartbeatDeps;
  #timer: ScheduleTimer;
  #chain: Promise<unknown> = Promise.resolve();

  constructor(deps: HeartbeatDeps) {
    this.#deps = deps;
    this.#timer = new ScheduleTimer(deps.clock, deps.config.scheduler.maxWaitMs, () => this.#tick());
  }

  get #intervalMs(): number {
    return this.#deps.config.heartbeat.intervalMinutes * 60_000;
  }

  /**
   * Re-posts runs a crash left unrecorded (once; then abandoned), keeps the stored cadence (a restart neither resets it
   * nor runs at once unless a run is due) and arms the timer. Resolves when the recovery posts are done.
   */
  async start(): Promise<void> {
    if (this.#timer.started) return;
    this.#timer.start();
    const { store, clock, logger } = this.#deps;
    await store.state(clock.now());
    for (const run of await store.unfinishedRuns()) {
      if (run.attempts >= MAX_POST_ATTEMPTS) {
        await store.failRun(run.id, 'abandoned', abandonedError(run.attempts), clock.now());
        logger.error(
          { run: run.id, reason: run.reason, attempts: run.attempts },
          'heartbeat run abandoned after repeated crashes while posting it',
        );
        continue;
      }
      await store.retryRun(run.id);
      logger.warn(
        { run: run.id, reason: run.reason },
        'heartbeat run was not recorded before the daemon stopped; posting it again (a repeat is recognized by its message id)',
      );
      void this.#enqueue(() => this.#post(run).catch(() => undefined));
    }
    await this.#arm();
    await this.idle();
  }

  /** Stops the timer and waits for posts in flight. */
  async stop(): Promise<void> {
    this.#timer.stop();
    await this.idle();
  }

  /** Resolves once every run queued so far is settled. */
  async idle(): Promise<void> {
    await this.#chain.catch(() => undefined);
  }

  /** Adds a task to the batch; resolves once it is stored. Rejects with invalid_input / conflict. */
  async addTask(input: { title: string; prompt: string }): Promise<HeartbeatTask> {
    const title = input.title.trim();
    const prompt = input.prompt.trim();
    if (!title || title.length > 120) throw invalidInput('title: give 1-120 characters', 'title');
    if (!prompt) throw invalidInput('prompt: must not be empty', 'prompt');
    if (await this.#deps.store.resolveTask(title)) throw conflict(`a heartbeat task titled "${title}" already exists`);
    const now = this.#deps.clock.now();
    const task: HeartbeatTask = { id: newId(), title, prompt, createdAt: now, updatedAt: now };
    await this.#deps.store.insertTask(task);
    this.#deps.logger.info({ task: task.id, title }, 'heartbeat task added');
    return task;
  }

  /** Every task, oldest first. */
  async listTasks(): Promise<HeartbeatTask[]> {
    return this.#deps.store.listTasks();
  }

  /** Removes a task by id or title; resolves once it is deleted. Rejects with not_found. */
  async removeTask(ref: string): Promise<HeartbeatTask> {
    const task = await this.#deps.store.resolveTask(ref.trim());
    if (!task) throw notFound(`no heartbeat task "${ref}" (give its id or title; heartbeat_list shows them)`);
    await this.#deps.store.deleteTask(task.id);
    this.#deps.logger.info({ task: task.id, title: task.title }, 'heartbeat task removed');
    return task;
  }

  /**
   * Queues text for the next heartbeat run (durably; it goes into exactly one run's prompt) and resolves to it with the
   * time of that run. Given `trx`, the event is written in that transaction and commits with it (with an idempotency
   * key's answer); else it is committed when this resolves. Rejects with conflict when the timer is off: no next run
   * would come without an explicit one.
   */
  async queueEvent(
    text: string,
    source: string,
    trx?: Transaction<Database>,
  ): Promise<{ event: HeartbeatEvent; nextRunAt: number }> {
    if (this.#intervalMs <= 0) {
      throw conflict(
        'the heartbeat timer is off (heartbeat.intervalMinutes is 0), so there is no next heartbeat: send it with mode "now", or set heartbeat.intervalMinutes',
      );
    }
    const { event, state } = await this.#deps.store.addEvent(text, source, this.#deps.clock.now(), trx);
    const nextRunAt = state.anchorAt + this.#intervalMs;
    this.#deps.logger.info(
      { event: event.id, source, nextRunAt: new Date(nextRunAt).toISOString() },
      'event queued for the next heartbeat',
    );
    return { event, nextRunAt };
  }

  /**
   * Runs the heartbeat now, whatever the task list holds (an explicit run is never skipped). `extra` events go into this
   * run's prompt without being queued; `messageId` (default: a new one) is the engine's idempotency id for the run.
   * Resolves once the engine accepted the prompt; rejects when it refused it.
   */
  runNow(
    reason: Exclude<HeartbeatReason, 'timer'>,
    extra: ExtraEvent[] = [],
    options: { messageId?: string } = {},
  ): Promise<HeartbeatRunResult> {
    return this.#enqueue(() => this.#run(reason, extra, options.messageId));
  }

  /** When the timer runs next: the anchor plus the interval; null when the timer is off. */
  async nextRunAt(): Promise<number | null> {
    if (this.#intervalMs <= 0) return null;
    return (await this.#deps.store.state(this.#deps.clock.now())).anchorAt + this.#intervalMs;
  }

  /** The heartbeat's cadence, tasks, queued events and last run. */
  async status(): Promise<HeartbeatStatus> {
    const { store, clock, config } = this.#deps;
    const state = await store.state(clock.now());
    return {
      intervalMinutes: config.heartbeat.intervalMinutes,
      lastRunAt: state.lastRunAt,
      lastReason: state.lastReason,
      nextRunAt: this.#intervalMs <= 0 ? null : state.anchorAt + this.#intervalMs,
      tasks: (await store.listTasks()).length,
      pendingEvents: (await store.pendingEvents()).length,
      lastRun: (await store.runs(1))[0] ?? null,
    };
  }

  #enqueue<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.#chain.catch(() => undefined).then(fn);
    this.#chain = result;
    return result;
  }

  /** (Re)sets the timer for the next run; resolves once it is set. A failure to read the cadence is logged. */
  async #arm(): Promise<void> {
    try {
      await this.#timer.arm(() => this.nextRunAt());
    } catch (error) {
      this.#deps.logger.error({ err: errorMessage(error) }, 'heartbeat timer could not be armed');
    }
  }

  /** The timer fired: the due check and the run (or the empty tick) go on the run chain, so `idle()` covers them. */
  #tick(): void {
    if (this.#timer.stopped) return;
    this.#enqueue(() => this.#due()).catch((error: unknown) => {
      this.#deps.logger.error({ err: errorMessage(error) }, 'heartbeat tick failed');
    });
  }

  /** Runs the heartbeat when it is due (a tick with nothing to send moves the anchor only), else re-arms. */
  async #due(): Promise<void> {
    if (this.#timer.stopped) return;
    const next = await this.nextRunAt();
    const now = this.#deps.clock.now();
    if (next === null || next > now) {
      await this.#arm();
      return;
    }
    const { store, logger } = this.#deps;
    if ((await store.listTasks()).length === 0 && (await store.pendingEvents()).length === 0) {
      await store.setAnchor(now);
      logger.debug('heartbeat tick: no tasks and no queued events; nothing to run');
      await this.#arm();
      return;
    }
    // Re-armed by #begin once the run's intent (which moves the anchor) is written.
    const run = await this.#begin('timer', [], `heartbeat-${newId(16)}`, now);
    // A refusal is logged by #post, and the run's events wait for the next run.
    await this.#post(run).catch(() => undefined);
  }

  async #run(
    reason: HeartbeatReason,
    extra: ExtraEvent[],
    messageId = `heartbeat-${newId(16)}`,
  ): Promise<HeartbeatRunResult> {
    return this.#post(await this.#begin(reason, extra, messageId, this.#deps.clock.now()));
  }

  /** Writes a run's intent at `now` (its prompt, the events it claims, the moved anchor); a timer run re-arms after. */
  async #begin(reason: HeartbeatReason, extra: ExtraEvent[], messageId: string, now: number): Promise<HeartbeatRun> {
    const { store } = this.#deps;
    try {
      return await store.beginRun({
        messageId,
        reason,
        now,
        build: (tasks, events) => heartbeatPrompt({ now, reason, tasks, events, extra }),
      });
    } finally {
      if (reason === 'timer') await this.#arm();
    }
  }

  /** Posts a run and records the outcome; rejects with the engine's error when it refused the run. */
  #post(run: HeartbeatRun): Promise<HeartbeatRunResult> {
    const { engine, store, clock, logger, config } = this.#deps;
    return postAndRecord(
      engine,
      { target: { type: 'heartbeat' }, origin: 'heartbeat', prompt: run.prompt, messageId: run.messageId },
      {
        accepted: async (accepted) => {
          await store.finishRun(
            run.id,
            { sessionId: accepted.sessionId, duplicate: accepted.duplicate, now: clock.now() },
            config.scheduler.keepRuns,
          );
          logger.info(
            {
              run: run.id,
              reason: run.reason,
              tasks: run.tasks,
              events: run.events,
              session: accepted.sessionId,
              duplicate: accepted.duplicate,
            },
            'heartbeat run posted',
          );
          return {
            runId: run.id,
            sessionId: accepted.sessionId,
            messageId: accepted.messageId,
            duplicate: accepted.duplicate,
            tasks: run.tasks,
            events: run.events,
          };
        },
        refused: async (error) => {
          await store.failRun(run.id, 'failed', errorMessage(error), clock.now());
          logger.error(
            { run: run.id, reason: run.reason, err: errorMessage(error) },
            'heartbeat run could not be posted to the engine; its events wait for the next run',
          );
          throw error;
        },
      },
    );
  }
}
