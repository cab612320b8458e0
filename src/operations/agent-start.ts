import { z } from 'zod';
import { defineOperation } from './operation.ts';

const input = z.strictObject({
  name: z.string().trim().min(1, 'give the agent a name').max(64).describe('a short name for the agent'),
  prompt: z.string().trim().min(1, 'the prompt must not be empty'),
  parent: z
    .string()
    .trim()
    .min(1)
    .optional()
    .describe('engine session that gets its replies (default: the most recent chat session)'),
});

/**
 * Starts a background agent (an engine subagent session) from the command line or RPC with an explicit parent. Agents
 * use spawn_agent instead, which makes the calling session the parent.
 */
export const agentStartOperation = defineOperation({
  name: 'agent-start',
  summary: 'Start a background agent on a task; its replies go to its parent engine session',
  needs: ['engine'],
  input,
  expose: {
    rpc: 'engine.start',
    cli: { name: 'agent-start', args: ['<name>', '<prompt...>'] },
  },
  async run(ctx, args): Promise<{ sessionId: string; name: string }> {
    const { sessionId } = await ctx.services.engine.startBackgroundAgent({
      prompt: args.prompt,
      name: args.name,
      ...(args.parent ? { parentSessionId: args.parent } : {}),
    });
    return { sessionId, name: args.name };
  },
  format(r) {
    return `🤖 Started background agent "${r.name}" (session ${r.sessionId}).`;
  },
});
