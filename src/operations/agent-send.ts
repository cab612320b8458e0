import { z } from 'zod';
import { invalidInput, notFound } from '../core/errors.ts';
import type { Accepted } from '../engine/api.ts';
import { callerOrigin } from './engine-common.ts';
import type { OperationContext } from './operation.ts';
import { defineOperation } from './operation.ts';

const input = z.strictObject({
  session: z
    .string()
    .trim()
    .min(1, 'give an engine session id (see agents)')
    .optional()
    .describe('target engine session id; default for an agent: its parent (subagents) or the most recent user session'),
  text: z.string().trim().min(1, 'the text must not be empty'),
});

/** Posts the message: from the calling engine session (its origin, its default target) or from RPC, CLI or a chat. */
async function send(ctx: OperationContext<'engine'>, session: string | undefined, text: string): Promise<Accepted> {
  const { engine } = ctx.services;
  const caller = ctx.caller;
  switch (caller.kind) {
    case 'agent':
      return engine.sendFromSession(caller.sessionId, text, session);
    case 'chat':
    case 'rpc':
    case 'cli': {
      if (!session) throw invalidInput('session: give an engine session id (see agents)', 'session');
      const accepted = await engine.postSystemMessage({ sessionId: session }, text, callerOrigin(caller));
      if (!accepted) throw notFound(`session: no engine session ${session} (see agents)`);
      return accepted;
    }
  }
}

/**
 * Posts a system message to an engine session; it runs a turn there. An agent's message carries its own origin and
 * goes by default to its parent (subagents) or the most recent user session; others carry `rpc`, `cli` or
 * `chat:<channel>` and name the session.
 */
export const agentSendOperation = defineOperation({
  name: 'agent-send',
  summary:
    'Send a message to another agent engine session; it arrives there as a system message and runs a turn. Without a session an agent reaches its parent (subagents) or the most recent user session',
  needs: ['engine'],
  input,
  aliases: { sessionId: 'session' },
  expose: {
    tool: 'send_session_message',
    rpc: 'engine.send',
    cli: { name: 'agent-send', args: ['<session>', '<text...>'] },
  },
  async run(ctx, args): Promise<{ sessionId: string; messageId: string }> {
    const accepted = await send(ctx, args.session, args.text);
    return { sessionId: accepted.sessionId, messageId: accepted.messageId };
  },
  format(r) {
    return `📨 Message delivered to session ${r.sessionId} (message ${r.messageId}).`;
  },
});
