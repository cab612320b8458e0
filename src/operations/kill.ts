import { z } from 'zod';
import { AppError } from '../core/errors.ts';
import { sessionRef, summaryOf } from './common.ts';
import { truncate } from './format.ts';
import { legacyKill } from './legacy-rpc.ts';
import { commandChannel, defineOperation } from './operation.ts';
import { onSessionNode } from './remote.ts';
import type { SessionSummary } from './session-summary.ts';

const input = z.strictObject({ session: sessionRef });

/** Kills a running session. */
export const killOperation = defineOperation({
  name: 'kill',
  summary: 'Kill a running session',
  input,
  aliases: { id: 'session' },
  expose: {
    tool: 'claude_kill',
    command: { name: 'claude_kill', positional: ['session'], usage: '/claude_kill <id-or-name>' },
    rpc: 'sessions.kill',
    legacyRpc: legacyKill,
    cli: { name: 'kill', args: ['<session>'] },
  },
  async run(ctx, args): Promise<SessionSummary> {
    const remote = await onSessionNode<SessionSummary>(ctx, args.session, 'kill', args);
    if (remote) return remote;
    try {
      return summaryOf(
        ctx,
        await ctx.services.sessions.kill(args.session, 'killed by user', commandChannel(ctx.caller)),
      );
    } catch (error) {
      // A queued launch another node claimed meanwhile: it is killed there.
      const claimed =
        error instanceof AppError && error.kind === 'conflict'
          ? await onSessionNode<SessionSummary>(ctx, args.session, 'kill', args)
          : undefined;
      if (claimed) return claimed;
      throw error;
    }
  },
  format(s) {
    return `⛔ [${s.name}] Killed\n   📁 ${s.workdir}\n   📝 "${truncate(s.prompt, 60)}"`;
  },
});
