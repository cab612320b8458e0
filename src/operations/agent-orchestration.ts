// spawn_agent (fire and forget) and ask_agent (wait for the reply): an engine subagent, optionally one of the named
// agent profiles of linear.profiles (its instructions go in front of the message, its name names the subagent).
import { z } from 'zod';
import type { Config } from '../core/config.ts';
import { invalidInput } from '../core/errors.ts';
import type { OperationContext } from './operation.ts';
import { defineOperation } from './operation.ts';

const agent = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .optional()
  .describe('an agent profile of linear.profiles (default: a plain agent)');
const message = z.string().trim().min(1, 'the prompt must not be empty').describe('the task or question for the agent');

/** The subagent's name and first prompt for `agent` (a profile) and `message`. Throws invalid_input for an unknown profile. */
export function agentRequest(config: Config, name: string | undefined, text: string): { name: string; prompt: string } {
  if (!name) return { name: 'agent', prompt: text };
  const profiles = config.linear.profiles;
  const profile = Object.hasOwn(profiles, name) ? profiles[name] : undefined;
  if (!profile) {
    const known = Object.keys(config.linear.profiles);
    throw invalidInput(
      `agent: no agent profile "${name}" (known: ${known.join(', ') || 'none; add them under linear.profiles'})`,
      'agent',
    );
  }
  return { name, prompt: profile.instructions.trim() ? `${profile.instructions.trim()}\n\n${text}` : text };
}

function parentOf(ctx: OperationContext): { parentSessionId?: string } {
  return ctx.caller.kind === 'agent' ? { parentSessionId: ctx.caller.sessionId } : {};
}

/** Starts an agent (a subagent of the calling session, if an agent calls) on a task and returns at once; its replies go to its parent. */
export const spawnAgentOperation = defineOperation({
  name: 'spawn-agent',
  summary:
    'Start an agent (optionally a named profile) on a task in the background; returns at once, its reply comes back to you later',
  needs: ['engine'],
  input: z.strictObject({
    agent,
    message,
    name: z
      .string()
      .trim()
      .min(1, 'give the agent a name')
      .max(64)
      .optional()
      .describe('a short name for the agent, used in its reports (default: the profile, or "agent")'),
  }),
  aliases: { prompt: 'message' },
  expose: {
    tool: 'spawn_agent',
    rpc: 'agents.spawn',
    cli: { name: 'spawn-agent', args: ['<message...>'] },
  },
  async run(ctx, args): Promise<{ sessionId: string; agent: string }> {
    const request = agentRequest(ctx.services.config, args.agent, args.message);
    const name = args.name ?? request.name;
    const { sessionId } = await ctx.services.engine.startBackgroundAgent({
      prompt: request.prompt,
      name,
      ...parentOf(ctx),
    });
    return { sessionId, agent: name };
  },
  format(r) {
    return `🤖 Started agent "${r.agent}" (session ${r.sessionId}); its reply comes back as a message.`;
  },
});

/** Asks an agent and waits for its first reply (up to timeoutSec). */
export const askAgentOperation = defineOperation({
  name: 'ask-agent',
  summary: 'Ask an agent (optionally a named profile) and wait for its reply',
  needs: ['engine'],
  input: z.strictObject({
    agent,
    message,
    timeoutSec: z
      .number()
      .positive()
      .max(3_600)
      .optional()
      .describe('how long to wait for the reply (default engine.askTimeoutMs)'),
  }),
  expose: {
    tool: 'ask_agent',
    rpc: 'agents.ask',
    cli: { name: 'ask-agent', args: ['<message...>'] },
  },
  async run(ctx, args): Promise<{ sessionId: string; agent: string; text: string }> {
    const request = agentRequest(ctx.services.config, args.agent, args.message);
    const reply = await ctx.services.engine.askAgent({
      prompt: request.prompt,
      name: request.name,
      ...parentOf(ctx),
      ...(args.timeoutSec ? { timeoutMs: Math.round(args.timeoutSec * 1000) } : {}),
    });
    return { sessionId: reply.sessionId, agent: request.name, text: reply.text };
  },
  format(r) {
    return r.text;
  },
});
