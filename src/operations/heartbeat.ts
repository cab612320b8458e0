import { z } from 'zod';
import { iso } from '../engine/scheduler/cron-run-text.ts';
import type { HeartbeatRunResult, HeartbeatStatus } from '../engine/scheduler/heartbeat.ts';
import type { SchedulerStatus } from '../engine/scheduler/scheduler.ts';
import type { WakeStats } from '../engine/wake/wake-router.ts';
import type { HeartbeatTask } from '../store/heartbeat-store.ts';
import { when } from './cron.ts';
import { truncate } from './format.ts';
import { defineOperation } from './operation.ts';

function formatHeartbeat(s: HeartbeatStatus): string {
  const timer =
    s.intervalMinutes > 0
      ? `every ${s.intervalMinutes} min, next ${when(s.nextRunAt)}`
      : 'timer off (heartbeat.intervalMinutes = 0)';
  const last =
    s.lastRun && (s.lastRun.status === 'failed' || s.lastRun.status === 'abandoned')
      ? `\n   ❌ last run ${s.lastRun.status}: ${truncate(s.lastRun.error ?? '', 160)}`
      : '';
  return `💓 Heartbeat: ${timer} · last run ${when(s.lastRunAt)}${s.lastReason ? ` (${s.lastReason})` : ''} · ${s.tasks} task${s.tasks === 1 ? '' : 's'} · ${s.pendingEvents} queued event${s.pendingEvents === 1 ? '' : 's'}${last}`;
}

/** Adds a heartbeat task. */
export const heartbeatAddOperation = defineOperation({
  name: 'heartbeat-add',
  summary: 'Add a task to the heartbeat batch (sent to the heartbeat session on every heartbeat run)',
  needs: ['scheduler'],
  input: z.strictObject({
    title: z.string().trim().min(1, 'give the task a title').max(120).describe('short unique title'),
    prompt: z.string().trim().min(1, 'the prompt must not be empty').describe('what to check on each heartbeat'),
  }),
  expose: {
    tool: 'heartbeat_add',
    command: { name: 'heartbeat_add', positional: ['title', 'prompt'], usage: '/heartbeat_add "<title>" <prompt>' },
    rpc: 'heartbeat.add',
    cli: { name: 'heartbeat-add', args: ['<title>', '<prompt...>'] },
  },
  async run(ctx, args): Promise<HeartbeatTask> {
    return ctx.services.scheduler.heartbeat.addTask(args);
  },
  format(t) {
    return `✅ Heartbeat task added: ${t.title} [${t.id}]\n   📝 "${truncate(t.prompt, 80)}"`;
  },
});

/** Lists the heartbeat tasks and the heartbeat's state. */
export const heartbeatListOperation = defineOperation({
  name: 'heartbeat-list',
  summary: 'List the heartbeat tasks, the last and next heartbeat run and the queued events',
  needs: ['scheduler'],
  input: z.strictObject({}),
  expose: {
    tool: 'heartbeat_list',
    command: { name: 'heartbeat_list', positional: [], usage: '/heartbeat_list' },
    rpc: 'heartbeat.list',
    cli: { name: 'heartbeat-list', args: [] },
  },
  async run(ctx): Promise<{ tasks: HeartbeatTask[]; status: HeartbeatStatus }> {
    const { heartbeat } = ctx.services.scheduler;
    return { tasks: await heartbeat.listTasks(), status: await heartbeat.status() };
  },
  format(r) {
    const tasks =
      r.tasks.length === 0
        ? 'No heartbeat tasks.'
        : r.tasks.map((t, i) => `${i + 1}. ${t.title} [${t.id}]\n   📝 "${truncate(t.prompt, 80)}"`).join('\n');
    return `${formatHeartbeat(r.status)}\n\n${tasks}`;
  },
});

/** Removes a heartbeat task. */
export const heartbeatRemoveOperation = defineOperation({
  name: 'heartbeat-remove',
  summary: 'Remove a heartbeat task',
  needs: ['scheduler'],
  input: z.strictObject({ task: z.string().trim().min(1, 'give a heartbeat task id or title') }),
  aliases: { id: 'task', title: 'task' },
  expose: {
    tool: 'heartbeat_remove',
    command: { name: 'heartbeat_remove', positional: ['task'], usage: '/heartbeat_remove <id-or-title>' },
    rpc: 'heartbeat.remove',
    cli: { name: 'heartbeat-remove', args: ['<task>'] },
  },
  async run(ctx, args): Promise<HeartbeatTask> {
    return ctx.services.scheduler.heartbeat.removeTask(args.task);
  },
  format(t) {
    return `🗑️ Heartbeat task ${t.title} [${t.id}] removed`;
  },
});

/** Runs the heartbeat now, tasks or not. */
export const heartbeatRunOperation = defineOperation({
  name: 'heartbeat-run',
  summary: 'Run the heartbeat now (even with no tasks), optionally with a note for it',
  needs: ['scheduler'],
  input: z.strictObject({
    text: z.string().trim().min(1).optional().describe('a note included in this run as an event'),
  }),
  expose: {
    command: { name: 'heartbeat_run', positional: ['text'], usage: '/heartbeat_run [note]' },
    rpc: 'heartbeat.run',
    cli: { name: 'heartbeat-run', args: ['[text...]'] },
  },
  async run(ctx, args): Promise<HeartbeatRunResult> {
    const extra = args.text ? [{ text: args.text, source: 'manual' }] : [];
    return ctx.services.scheduler.heartbeat.runNow('manual', extra);
  },
  format(r) {
    return `💓 Heartbeat run posted to session ${r.sessionId}: ${r.tasks} task${r.tasks === 1 ? '' : 's'}, ${r.events} queued event${r.events === 1 ? '' : 's'}`;
  },
});

/** Cron, heartbeat and wake figures in one place. */
export const schedulerStatusOperation = defineOperation({
  name: 'scheduler-status',
  summary: 'Show the scheduler: cron tasks, the heartbeat, and wake deliveries (undelivered wakes included)',
  needs: ['scheduler'],
  input: z.strictObject({}),
  expose: {
    tool: 'scheduler_status',
    command: { name: 'scheduler_status', positional: [], usage: '/scheduler_status' },
    rpc: 'scheduler.status',
    cli: { name: 'scheduler-status', args: [] },
  },
  async run(ctx): Promise<SchedulerStatus & { wake: WakeStats | null }> {
    return { ...(await ctx.services.scheduler.status()), wake: (await ctx.services.wake?.stats()) ?? null };
  },
  format(s) {
    const lines = [
      `⏰ Cron: ${s.cron.tasks} task${s.cron.tasks === 1 ? '' : 's'} (${s.cron.enabled} enabled), next run ${when(s.cron.nextRunAt)} · missed runs after downtime: ${s.missedRuns}`,
      formatHeartbeat(s.heartbeat),
    ];
    if (s.wake) {
      const w = s.wake;
      lines.push(
        `🔔 Wakes since start: ${w.delivered} delivered, ${w.undelivered} undelivered, ${w.debounced} debounced, ${w.failedAttempts} failed attempts · ${w.pending} pending`,
      );
      for (const e of w.recentUndelivered)
        lines.push(
          `   ⚠️ undelivered ${e.kind} event of session ${e.codingSessionId} (${iso(e.createdAt)}): ${truncate(e.error ?? '', 160)}`,
        );
    }
    return lines.join('\n');
  },
});
