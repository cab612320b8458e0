import { z } from 'zod';
import { decodeCursor, encodeCursor } from '../core/cursor.ts';
import { invalidInput } from '../core/errors.ts';
import type { SessionStatus } from '../store/coding-session-types.ts';
import { SESSION_STATUSES } from '../store/coding-session-types.ts';
import { summaryOf } from './common.ts';
import { formatSessionList } from './format.ts';
import { legacySessions } from './legacy-rpc.ts';
import { defineOperation } from './operation.ts';
import { moreLine, pageFields } from './paging.ts';
import type { SessionSummary } from './session-summary.ts';

const input = z.strictObject({
  status: z
    .enum(['all', ...SESSION_STATUSES])
    .default('all')
    .describe('filter by status (default all)'),
  ...pageFields,
});

/** One page of the session list: `count` sessions, and `nextCursor` to ask for the next page (null on the last). */
export interface SessionListResult {
  status: string;
  sessions: SessionSummary[];
  count: number;
  nextCursor: string | null;
}

/** Lists sessions, newest first, one page at a time. */
export const listOperation = defineOperation({
  name: 'list',
  summary: 'List coding sessions, newest first (paged: limit, cursor)',
  input,
  expose: {
    tool: 'claude_sessions',
    command: {
      name: 'claude_sessions',
      positional: ['status'],
      usage: '/claude_sessions [--limit <n>] [--cursor <c>] [status]',
    },
    rpc: 'sessions.list',
    legacyRpc: legacySessions,
    cli: { name: 'sessions', args: [] },
  },
  async run(ctx, args): Promise<SessionListResult> {
    const statuses: SessionStatus[] | undefined = args.status === 'all' ? undefined : [args.status];
    const after = args.cursor === undefined ? undefined : decodeCursor(args.cursor);
    if (after && typeof after[1] !== 'string') throw invalidInput('cursor: not a cursor of the session list', 'cursor');
    const page = await ctx.services.sessions.page({
      ...(statuses ? { statuses } : {}),
      limit: args.limit,
      ...(after ? { after } : {}),
    });
    const sessions = page.sessions.map((r) => summaryOf(ctx, r));
    return {
      status: args.status,
      sessions,
      count: sessions.length,
      nextCursor: page.next ? encodeCursor(page.next) : null,
    };
  },
  format(r) {
    return formatSessionList(r.sessions, r.status) + moreLine(r.nextCursor);
  },
});
