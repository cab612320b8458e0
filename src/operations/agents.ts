import { z } from 'zod';
import { formatDuration } from '../coding/format.ts';
import { pageOf } from '../core/page.ts';
import type { EngineSessionSummary } from '../engine/api.ts';
import { describeDescriptor } from '../engine/descriptor.ts';
import { visibleTo } from './engine-common.ts';
import { defineOperation } from './operation.ts';
import { moreLine, pageFields } from './paging.ts';

const TYPES = ['all', 'user', 'cron', 'heartbeat', 'subagent'] as const;

const input = z.strictObject({
  type: z
    .enum(TYPES)
    .default('all')
    .describe('filter by session type: user, cron, heartbeat or subagent (default all)'),
  ...pageFields,
});

interface AgentsResult {
  type: (typeof TYPES)[number];
  now: number;
  sessions: EngineSessionSummary[];
  /** Sessions on this page. */
  count: number;
  /** Pass back as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

const OUTCOME_ICON: Record<NonNullable<EngineSessionSummary['lastOutcome']>, string> = {
  ok: '✅',
  error: '❌',
  limit: '⚠️',
  internal_error: '💥',
};

function line(s: EngineSessionSummary, now: number): string {
  const state = s.state === 'running' ? '🟢 running' : '⚪ idle';
  const queued = s.queued > 0 ? `, ${s.queued} queued` : '';
  const last = s.lastOutcome ? `, last turn ${OUTCOME_ICON[s.lastOutcome]} ${s.lastOutcome}` : '';
  return `${state} ${describeDescriptor(s.descriptor)} [${s.id}] — active ${formatDuration(now - s.updatedAt)} ago${queued}${last}`;
}

/** Lists the agent engine's sessions, newest first, one page at a time. */
export const agentsOperation = defineOperation({
  name: 'agents',
  summary:
    'List agent engine sessions: chat conversations, background agents, cron and heartbeat sessions (newest first, paged: limit, cursor)',
  input,
  needs: ['engine'],
  expose: {
    tool: 'list_agents',
    command: {
      name: 'agents',
      positional: ['type'],
      usage: '/agents [--limit <n>] [--cursor <c>] [user|cron|heartbeat|subagent]',
    },
    rpc: 'engine.sessions',
    cli: { name: 'agents', args: [] },
  },
  async run(ctx, args): Promise<AgentsResult> {
    const all = visibleTo(ctx.caller, await ctx.services.engine.sessions());
    const matching = args.type === 'all' ? all : all.filter((s) => s.descriptor.type === args.type);
    const page = pageOf(matching, args, (s) => [s.createdAt, s.id]);
    return {
      type: args.type,
      now: ctx.services.clock.now(),
      sessions: page.items,
      count: page.items.length,
      nextCursor: page.nextCursor,
    };
  },
  format(r) {
    if (r.sessions.length === 0) return r.type === 'all' ? 'No agent sessions.' : `No ${r.type} agent sessions.`;
    return r.sessions.map((s) => line(s, r.now)).join('\n') + moreLine(r.nextCursor);
  },
});
