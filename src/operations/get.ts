import { z } from 'zod';
import { sessionRef, summaryOf } from './common.ts';
import { formatSessionLine } from './format.ts';
import { defineOperation } from './operation.ts';
import type { SessionSummary } from './session-summary.ts';

/** One session's details. */
export const getOperation = defineOperation({
  name: 'get',
  summary: "Show one session's details",
  input: z.strictObject({ session: sessionRef }),
  aliases: { id: 'session' },
  expose: {
    rpc: 'sessions.get',
    cli: { name: 'show', args: ['<session>'] },
  },
  async run(ctx, args): Promise<SessionSummary> {
    return summaryOf(ctx, await ctx.services.sessions.get(args.session));
  },
  format: formatSessionLine,
});
