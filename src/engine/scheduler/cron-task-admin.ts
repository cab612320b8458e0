// What users do with cron tasks: add (validated), list, page, look up, remove, enable and disable. Each change that
// alters the schedule ends by calling `changed` (the scheduler sets its timer again); the scheduler runs the changes
// one at a time.
import type { Clock } from '../../core/clock.ts';
import type { Config } from '../../core/config.ts';
import { conflict, invalidInput, notFound } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import type { Logger } from '../../core/logger.ts';
import type { Page, PageRequest } from '../../core/page.ts';
import { pageOf } from '../../core/page.ts';
import type { CronRun, CronTask, CronTaskStore } from '../../store/cron-tasks.ts';
import { parseCronExpression } from './cron-expression.ts';
import type { CronSchedules } from './cron-schedules.ts';

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

/** What the task admin reads and writes; `changed` re-arms the scheduler's timer after a change. */
export interface CronTaskAdminDeps {
  store: Pick<CronTaskStore, 'insert' | 'resolve' | 'list' | 'runs' | 'delete' | 'setEnabled'>;
  schedules: Pick<CronSchedules, 'of' | 'forget'>;
  clock: Clock;
  logger: Logger;
  config: { scheduler: Pick<Config['scheduler'], 'timezone'> };
  changed: () => Promise<void>;
}

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Adds, lists, removes and switches cron tasks; the caller runs the changes one at a time. */
export class CronTaskAdmin {
  #deps: CronTaskAdminDeps;

  constructor(deps: CronTaskAdminDeps) {
    this.#deps = deps;
  }

  /** Validates and stores a new task; an enabled task is scheduled at once. Throws invalid_input / conflict. */
  async add(input: CronTaskInput): Promise<CronTask> {
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
    await this.#deps.changed();
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
  async remove(ref: string): Promise<CronTask> {
    const task = await this.#require(ref);
    await this.#deps.store.delete(task.id);
    this.#deps.schedules.forget(task.id);
    this.#deps.logger.info({ task: task.id, name: task.name }, 'cron task removed');
    await this.#deps.changed();
    return task;
  }

  /** Enables (next due time from now: no catch-up for the time it was off) or disables a task. Throws not_found. */
  async setEnabled(ref: string, enabled: boolean): Promise<CronTask> {
    const task = await this.#require(ref);
    const now = this.#deps.clock.now();
    const next = enabled ? (this.#deps.schedules.of(task)?.next(now) ?? null) : null;
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
    await this.#deps.changed();
    return this.#require(task.id);
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
}
