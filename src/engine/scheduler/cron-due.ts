// Schedule arithmetic of cron tasks, without the store, the clock or the log: which tasks are due at a moment, the
// earliest due time to set the timer for, and what a start (runs missed while the daemon was down) or a timer tick does
// with one task's due times under `scheduler.missedRuns`. `cron-firing.ts` carries the steps out.
import type { Config } from '../../core/config.ts';
import type { CronTask } from '../../store/cron-tasks.ts';
import type { CronExpression, DueWindow } from './cron-expression.ts';
import { dueWindow } from './cron-expression.ts';

/** The missed-run policy (`scheduler.missedRuns`). */
export type MissedRunsPolicy = Config['scheduler']['missedRuns'];

/** A task with a due time. */
export type DueTask = CronTask & { nextRunAt: number };

/** What the start does with an enabled task whose stored due time may have passed while the daemon was down. */
export type StartStep =
  /** Nothing was missed (or the schedule no longer parses: null): store this as the next due time. */
  | { kind: 'reschedule'; nextRunAt: number | null }
  /** Due times were missed and the policy is `skip`: record them as skipped and move on to `nextRunAt`. */
  | { kind: 'skip'; missed: DueWindow; nextRunAt: number | null }
  /** Due times were missed and the policy is `run-once`: one catch-up run at the last of them, then `nextRunAt`. */
  | { kind: 'catch-up'; missed: DueWindow; nextRunAt: number | null };

/** What a timer tick does with a task that is due. */
export type TickStep =
  /** Nothing is due after all (or the schedule no longer parses: null): store this as the next due time. */
  | { kind: 'reschedule'; nextRunAt: number | null }
  /** Run at `dueAt` (a catch-up run names the earlier due times it stands for in `missed`), then `nextRunAt`. */
  | {
      kind: 'run';
      dueAt: number;
      runKind: 'scheduled' | 'catch-up';
      missed: DueWindow | null;
      nextRunAt: number | null;
    }
  /** The timer woke late and the policy is `skip`: record `skipped` (earlier due times), then run at `dueAt`. */
  | { kind: 'skip-then-run'; skipped: DueWindow; dueAt: number; nextRunAt: number | null };

/** The enabled tasks due at `now` (next due time at or before it), in due-time order, then creation order. */
export function dueTasks(tasks: CronTask[], now: number): DueTask[] {
  return tasks
    .filter((t): t is DueTask => t.enabled && t.nextRunAt !== null && t.nextRunAt <= now)
    .sort((a, b) => a.nextRunAt - b.nextRunAt || a.createdAt - b.createdAt);
}

/** The earliest next due time of an enabled task, or null when none has one. */
export function earliestDue(tasks: CronTask[]): number | null {
  let next = Infinity;
  for (const task of tasks) if (task.enabled && task.nextRunAt !== null && task.nextRunAt < next) next = task.nextRunAt;
  return next === Infinity ? null : next;
}

/** The due times after the last one handled (or from the stored next due time on) and at or before `now`. */
function pending(lastDueAt: number | null, nextRunAt: number, expr: CronExpression, now: number): DueWindow | null {
  return dueWindow(expr, Math.max(lastDueAt ?? -Infinity, nextRunAt - 1), now);
}

/** What the start does with an enabled task (`expr` null: its schedule no longer parses). */
export function startStep(
  task: CronTask,
  expr: CronExpression | null,
  now: number,
  policy: MissedRunsPolicy,
): StartStep {
  if (!expr) return { kind: 'reschedule', nextRunAt: null };
  // Not due yet: recomputed from now, as the expression or the default time zone may have changed since it was stored.
  if (task.nextRunAt === null || task.nextRunAt > now) return { kind: 'reschedule', nextRunAt: expr.next(now) };
  const window = pending(task.lastDueAt, task.nextRunAt, expr, now);
  if (!window) return { kind: 'reschedule', nextRunAt: expr.next(now) };
  switch (policy) {
    case 'skip':
      return { kind: 'skip', missed: window, nextRunAt: expr.next(now) };
    case 'run-once':
      return { kind: 'catch-up', missed: window, nextRunAt: expr.next(now) };
    default:
      return policy satisfies never;
  }
}

/** What a tick at `now` does with a due task (`expr` null: its schedule no longer parses). */
export function tickStep(task: DueTask, expr: CronExpression | null, now: number, policy: MissedRunsPolicy): TickStep {
  if (!expr) return { kind: 'reschedule', nextRunAt: null };
  const window = pending(task.lastDueAt, task.nextRunAt, expr, now);
  if (!window) return { kind: 'reschedule', nextRunAt: expr.next(now) };
  if (window.count === 1)
    return { kind: 'run', dueAt: window.first, runKind: 'scheduled', missed: null, nextRunAt: expr.next(now) };
  // The timer woke late across several due times (the machine slept): the latest is this run; the earlier ones were
  // missed and follow the policy.
  const earlier = dueWindow(expr, window.first - 1, window.last - 1);
  if (earlier && policy === 'skip')
    return { kind: 'skip-then-run', skipped: earlier, dueAt: window.last, nextRunAt: expr.next(now) };
  return { kind: 'run', dueAt: window.last, runKind: 'catch-up', missed: earlier ?? null, nextRunAt: expr.next(now) };
}
