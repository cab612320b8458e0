import { z } from 'zod';
import { SESSION_STATUSES } from '../store/coding-sessions.ts';
import type { SessionStatus } from '../store/coding-sessions.ts';
import { summaryOf } from './common.ts';
import { formatSessionList } from './format.ts';
import { defineOperation } from './operation.ts';
import type { SessionSummary } from './session-summary.ts';

const input = z.strictObject({
  status: z.enum(['all', ...SESSION_STATUSES]).default('all').describe('filter by status (default all)'),
});

/** Lists sessions, newest first. */
export const listOperation = defineOperation({
  name: 'list',
  summary: 'List coding sessions',
  input,
  expose: {
    tool: 'claude_sessions',
    command: { name: 'claude_sessions', positional: ['status'], usage: '/claude_sessions [status]' },
    rpc: 'sessions.list',
    cli: { name: 'sessions', args: [] },
  },
  async run(ctx, args): Promise<{ status: string; sessions: SessionSummary[]; count: number }> {
    const statuses: SessionStatus[] | undefined = args.status === 'all' ? undefined : [args.status];
    const sessions = ctx.services.sessions.list(statuses).map((r) => summaryOf(ctx, r));
    return { status: args.status, sessions, count: sessions.length };
  },
  format(r) {
    return formatSessionList(r.sessions, r.status);
  },
});
