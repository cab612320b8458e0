import { z } from 'zod';
import { sessionRef, summaryOf } from './common.ts';
import { truncate } from './format.ts';
import { commandChannel, deciderOf, defineOperation } from './operation.ts';
import { onSessionNode } from './remote.ts';
import type { SessionSummary } from './session-summary.ts';

type RespondResult = { session: SessionSummary; message: string; answeredPermission: boolean };

const input = z.strictObject({
  session: sessionRef,
  message: z.string().trim().min(1, 'the message must not be empty'),
  interrupt: z.boolean().optional().describe('stop the current turn first'),
  userInitiated: z.boolean().optional().describe('the user asked for this reply (resets the auto-respond count)'),
});

/** Sends a message into a running session (or answers its pending permission request). */
export const respondOperation = defineOperation({
  name: 'respond',
  summary: 'Send a message to a running session',
  input,
  aliases: { id: 'session', text: 'message' },
  expose: {
    tool: 'claude_respond',
    command: {
      name: 'claude_respond',
      positional: ['session', 'message'],
      usage: '/claude_respond [--interrupt] <id-or-name> <message>',
    },
    rpc: 'sessions.send',
    cli: { name: 'send', args: ['<session>', '<message...>'], hide: ['userInitiated'] },
  },
  async run(ctx, args): Promise<RespondResult> {
    const remote = await onSessionNode<RespondResult>(ctx, args.session, 'respond', args);
    if (remote) return remote;
    const source = ctx.caller.kind === 'agent' && !args.userInitiated ? 'agent' : 'user';
    const { session, result } = await ctx.services.sessions.send(args.session, args.message, {
      source,
      ...(args.interrupt ? { interrupt: true } : {}),
      ...commandChannel(ctx.caller),
      by: deciderOf(ctx.caller),
    });
    return {
      session: summaryOf(ctx, session.record),
      message: args.message,
      answeredPermission: result === 'answered',
    };
  },
  format(r) {
    const verb = r.answeredPermission ? 'Answered permission request' : 'Responded';
    return `↩️ [${r.session.name}] ${verb}:\n${truncate(r.message, 200)}`;
  },
});
