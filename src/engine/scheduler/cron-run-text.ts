// What a cron session receives for a run, and the time format scheduler messages use.
import type { CronTask } from '../../store/cron-tasks.ts';
import type { DueWindow } from './cron-expression.ts';

/** Epoch ms as an ISO-8601 UTC string. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** The text a cron session receives for a run: a header naming the task and the due time, then the task's prompt. */
export function cronRunText(task: Pick<CronTask, 'id' | 'name' | 'prompt'>, dueAt: number, missed?: DueWindow): string {
  const header = missed
    ? `[Scheduled task "${task.name}" (${task.id}) — catch-up run: ${missed.capped ? `more than ${missed.count}` : missed.count} run${missed.count === 1 ? ' was' : 's were'} missed while switchboard was down (first due ${iso(missed.first)}, last due ${iso(missed.last)})]`
    : `[Scheduled task "${task.name}" (${task.id}) — run due ${iso(dueAt)}]`;
  return `${header}\n\n${task.prompt}`;
}
