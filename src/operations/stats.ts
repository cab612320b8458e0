import { z } from 'zod';
import type { SessionMetrics } from '../store/coding-session-runs.ts';
import { formatStats } from './format.ts';
import { legacyStats } from './legacy-rpc.ts';
import { defineOperation } from './operation.ts';

/** Usage metrics over every session run. */
export const statsOperation = defineOperation({
  name: 'stats',
  summary: 'Show session statistics: counts, durations, cost per day, the most expensive session',
  input: z.strictObject({}),
  expose: {
    tool: 'claude_stats',
    command: { name: 'claude_stats', positional: [], usage: '/claude_stats' },
    rpc: 'sessions.stats',
    legacyRpc: legacyStats,
    cli: { name: 'stats', args: [] },
  },
  async run(ctx): Promise<SessionMetrics> {
    return ctx.services.sessions.stats();
  },
  format: formatStats,
});
