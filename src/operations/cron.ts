import { z } from 'zod';
import { iso } from '../engine/scheduler/cron-run-text.ts';
import type { CronTaskInfo } from '../engine/scheduler/cron-scheduler.ts';
import type { Scheduler } from '../engine/scheduler/scheduler.ts';
import type { CronTask } from '../store/cron-tasks.ts';
import { truncate } from './format.ts';
import { defineOperation } from './operation.ts';
import { moreLine, pageFields } from './paging.ts';

const taskRef = z.string().trim().min(1, 'give a cron task id or name');

/** A time as listings show it: ISO 8601, or 'never'. */
export function when(ms: number | null): string {
  return ms === null ? 'never' : iso(ms);
}

function zone(task: Pick<CronTask, 'timezone'>): string {
  return task.timezone ?? 'default time zone';
}

function formatTask(t: CronTaskInfo | CronTask): string {
  const lines = [
    `${t.enabled ? '⏰' : '⏸️'} ${t.name} [${t.id}] — ${t.schedule} (${zone(t)})${t.enabled ? '' : ', disabled'}`,
    `   📝 "${truncate(t.prompt, 80)}"`,
    `   ⏭️ next: ${t.enabled ? when(t.nextRunAt) : 'off'} · last run: ${when(t.lastRunAt)}`,
  ];
  const last = 'lastRun' in t ? t.lastRun : null;
  if (last?.status === 'skipped')
    lines.push(
      `   ⚠️ ${last.missed} run${last.missed === 1 ? '' : 's'} missed while the daemon was down (skipped, last due ${iso(last.dueAt)})`,
    );
  if (last?.status === 'failed' || last?.status === 'abandoned')
    lines.push(`   ❌ run due ${iso(last.dueAt)} ${last.status}: ${truncate(last.error ?? '', 160)}`);
  if (last?.kind === 'catch-up' && last.status === 'posted')
    lines.push(`   ↩️ catch-up run for ${last.missed} missed run${last.missed === 1 ? '' : 's'}`);
  return lines.join('\n');
}

/** Adds a cron task. */
export const cronAddOperation = defineOperation({
  name: 'cron-add',
  summary: 'Add a cron task: a prompt sent to its own cron session on a schedule',
  needs: ['scheduler'],
  input: z.strictObject({
    name: z.string().trim().min(1, 'give the task a name').describe('unique name (letters, digits, ".", "_", "-")'),
    schedule: z
      .string()
      .trim()
      .min(1, 'give a cron expression')
      .describe('5-field cron expression ("0 9 * * 1-5") or @hourly/@daily/@weekly/@monthly/@yearly'),
    prompt: z
      .string()
      .trim()
      .min(1, 'the prompt must not be empty')
      .describe('what the cron session is asked at each run'),
    timezone: z
      .string()
      .trim()
      .min(1)
      .optional()
      .describe('IANA time zone the schedule is read in (default: scheduler.timezone, else local time)'),
    enabled: z.boolean().optional().describe('false to add it switched off (default true)'),
  }),
  expose: {
    tool: 'cron_add',
    command: {
      name: 'cron_add',
      positional: ['name', 'schedule', 'prompt'],
      usage: '/cron_add [--timezone <zone>] [--no-enabled] <name> "<min hour day month weekday>" <prompt>',
    },
    rpc: 'cron.add',
    cli: {
      name: 'cron-add',
      args: ['<name>', '<schedule>', '<prompt...>'],
      hide: ['enabled'],
      switches: {
        disabled: { key: 'enabled', value: false, description: 'add it switched off (cron-enable switches it on)' },
      },
    },
  },
  async run(ctx, args): Promise<CronTask> {
    return ctx.services.scheduler.cron.add({
      name: args.name,
      schedule: args.schedule,
      prompt: args.prompt,
      ...(args.timezone ? { timezone: args.timezone } : {}),
      ...(args.enabled !== undefined ? { enabled: args.enabled } : {}),
    });
  },
  format(t) {
    return `✅ Cron task added\n${formatTask(t)}`;
  },
});

/** Lists cron tasks. */
export const cronListOperation = defineOperation({
  name: 'cron-list',
  summary: 'List cron tasks with their schedule, next run and last run (newest first, paged: limit, cursor)',
  needs: ['scheduler'],
  input: z.strictObject({ ...pageFields }),
  expose: {
    tool: 'cron_list',
    command: { name: 'cron_list', positional: [], usage: '/cron_list [--limit <n>] [--cursor <c>]' },
    rpc: 'cron.list',
    cli: { name: 'cron-list', args: [] },
  },
  async run(ctx, args): Promise<{ tasks: CronTaskInfo[]; missedRuns: string; nextCursor: string | null }> {
    const page = await ctx.services.scheduler.cron.page(args);
    return { tasks: page.items, missedRuns: ctx.services.config.scheduler.missedRuns, nextCursor: page.nextCursor };
  },
  format(r) {
    if (r.tasks.length === 0) return 'No cron tasks. Add one with cron_add.';
    return `${r.tasks.map(formatTask).join('\n\n')}\n\nMissed runs after downtime: ${r.missedRuns}${moreLine(r.nextCursor)}`;
  },
});

/**
 * An operation on one cron task named by id or name: `cron-<verb>` exposed as tool `cron_<verb>`, chat command
 * `/cron_<verb> <id-or-name>`, RPC method `cron.<verb>` and CLI subcommand `cron-<verb> <task>`.
 */
function cronTaskOperation<T>(
  verb: string,
  summary: string,
  run: (cron: Scheduler['cron'], task: string) => Promise<T>,
  format: (result: T) => string,
) {
  return defineOperation({
    name: `cron-${verb}`,
    summary,
    needs: ['scheduler'],
    input: z.strictObject({ task: taskRef }),
    aliases: { id: 'task', name: 'task' },
    expose: {
      tool: `cron_${verb}`,
      command: { name: `cron_${verb}`, positional: ['task'], usage: `/cron_${verb} <id-or-name>` },
      rpc: `cron.${verb}`,
      cli: { name: `cron-${verb}`, args: ['<task>'] },
    },
    async run(ctx, args): Promise<T> {
      return run(ctx.services.scheduler.cron, args.task);
    },
    format,
  });
}

/** Removes a cron task. */
export const cronRemoveOperation = cronTaskOperation(
  'remove',
  'Remove a cron task',
  (cron, task) => cron.remove(task),
  (t) => `🗑️ Cron task ${t.name} [${t.id}] removed`,
);

/** Switches a cron task on (no catch-up for the time it was off). */
export const cronEnableOperation = cronTaskOperation(
  'enable',
  'Switch a cron task on (it next runs at its next due time)',
  (cron, task) => cron.setEnabled(task, true),
  formatTask,
);

/** Switches a cron task off. */
export const cronDisableOperation = cronTaskOperation(
  'disable',
  'Switch a cron task off without removing it',
  (cron, task) => cron.setEnabled(task, false),
  formatTask,
);
