// linear_dispatches: the Linear pipeline as a person sees it — every dispatch with its state, attempt and runner, and
// the projects in planning mode.
import { z } from 'zod';
import { formatDuration } from '../coding/format.ts';
import { pageOf } from '../core/page.ts';
import type { DispatchRecord, DispatchStatus } from '../store/linear-dispatch-types.ts';
import {
  ACTIVE_DISPATCH_STATUSES,
  DISPATCH_STATUSES,
  FINISHED_DISPATCH_STATUSES,
} from '../store/linear-dispatch-types.ts';
import { ACTIVE_PLANNING_STATUSES } from '../store/linear-planning.ts';
import { defineOperation } from './operation.ts';
import { moreLine, pageFields } from './paging.ts';

const FILTERS = ['active', 'finished', 'all', ...DISPATCH_STATUSES] as const;

const input = z.strictObject({
  status: z
    .enum(FILTERS)
    .default('all')
    .describe('active, finished, all, or one status (queued, working, auditing, done, stuck, …)'),
  issue: z.string().trim().min(1).optional().describe('only this issue (identifier such as ENG-12, or id)'),
  ...pageFields,
});

/** One dispatch as listings show it. */
export interface DispatchView {
  id: string;
  issue: string;
  title: string;
  status: DispatchStatus;
  attempt: number;
  tier: string;
  harness: string;
  model: string | null;
  agentSessionId: string | null;
  lastError: string | null;
  updatedAt: number;
  /** The node running it (a cluster); null while queued and on a node alone before it was claimed. */
  node: string | null;
}

export interface DispatchesResult {
  now: number;
  dispatches: DispatchView[];
  /** Pass back as `cursor` for the next page of dispatches; null on the last page. */
  nextCursor: string | null;
  planning: { project: string; issue: string; status: string; turns: number }[];
}

const ICON: Record<DispatchStatus, string> = {
  queued: '⏳',
  dispatched: '🔧',
  working: '🟢',
  auditing: '🔍',
  done: '✅',
  stuck: '🛑',
  stopped: '⏹️',
};

function view(d: DispatchRecord): DispatchView {
  return {
    id: d.id,
    issue: d.identifier,
    title: d.title,
    status: d.status,
    attempt: d.attempt - d.roundStart + 1,
    tier: d.tier,
    harness: d.harness,
    model: d.model,
    agentSessionId: d.agentSessionId,
    lastError: d.lastError,
    updatedAt: d.updatedAt,
    node: d.node,
  };
}

/** Lists the pipeline's dispatches (newest first, paged) and the projects being planned. */
export const linearDispatchesOperation = defineOperation({
  name: 'linear-dispatches',
  summary:
    'List the Linear pipeline: dispatches (queued, working, auditing, done, stuck, stopped) and projects in planning mode (newest first, paged: limit, cursor)',
  input,
  needs: ['linear'],
  expose: {
    tool: 'linear_dispatches',
    command: {
      name: 'dispatches',
      positional: ['status'],
      usage: '/dispatches [--limit <n>] [--cursor <c>] [active|finished|all|<status>]',
    },
    rpc: 'linear.dispatches',
    cli: { name: 'dispatches', args: ['[status]'] },
  },
  async run(ctx, args): Promise<DispatchesResult> {
    const { linear } = ctx.services;
    const statuses: readonly DispatchStatus[] | undefined =
      args.status === 'all'
        ? undefined
        : args.status === 'active'
          ? ACTIVE_DISPATCH_STATUSES
          : args.status === 'finished'
            ? FINISHED_DISPATCH_STATUSES
            : [args.status];
    let list = await linear.pipeline.list(statuses);
    if (args.issue) {
      const ref = args.issue.toUpperCase();
      list = list.filter((d) => d.identifier.toUpperCase() === ref || d.issueId === args.issue);
    }
    const planning = (await linear.planner.store.list())
      .filter((s) => ACTIVE_PLANNING_STATUSES.includes(s.status))
      .map((s) => ({ project: s.projectName, issue: s.issueIdentifier, status: s.status, turns: s.turnCount }));
    const page = pageOf(list, args, (d) => [d.createdAt, d.id]);
    return { now: ctx.services.clock.now(), dispatches: page.items.map(view), nextCursor: page.nextCursor, planning };
  },
  format(r) {
    const lines = r.dispatches.map((d) => {
      const runner = `${d.harness}${d.model ? ` ${d.model}` : ''}`;
      const error = d.lastError && (d.status === 'stuck' || d.status === 'stopped') ? ` — ${d.lastError}` : '';
      const on = d.node ? ` on ${d.node}` : '';
      return `${ICON[d.status]} ${d.issue} ${d.title} — ${d.status}${on}, attempt ${d.attempt}, ${d.tier} (${runner}), updated ${formatDuration(Math.max(0, r.now - d.updatedAt))} ago${error}`;
    });
    if (lines.length === 0) lines.push('No Linear dispatches.');
    for (const p of r.planning)
      lines.push(`📝 Planning ${p.project} on ${p.issue} — ${p.status}, ${p.turns} turn${p.turns === 1 ? '' : 's'}`);
    return lines.join('\n') + moreLine(r.nextCursor);
  },
});
