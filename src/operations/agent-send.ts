import { z } from 'zod';
import { notFound } from '../core/errors.ts';
import { callerOrigin, requireEngine } from './engine-common.ts';
import { defineOperation } from './operation.ts';

const input = z.strictObject({
  session: z.string().trim().min(1, 'give an engine session id (see agents)'),
  text: z.string().trim().min(1, 'the text must not be empty'),
});

/**
 * Posts a system message to an engine session (origin `rpc`, `cli` or `chat:<channel>`); it runs a turn there.
 * Agents use the engine's own send_session_message tool instead, which knows their parent.
 */
export const agentSendOperation = defineOperation({
  name: 'agent-send',
  summary: 'Send a message to an agent engine session; it arrives as a system message and runs a turn',
  input,
  expose: {
    rpc: 'engine.send',
    cli: { name: 'agent-send', args: ['<session>', '<text...>'] },
  },
  async run(ctx, args): Promise<{ sessionId: string; messageId: string }> {
    const accepted = await requireEngine(ctx).postSystemMessage({ sessionId: args.session }, args.text, callerOrigin(ctx.caller));
    if (!accepted) throw notFound(`session: no engine session ${args.session} (see agents)`);
    return { sessionId: accepted.sessionId, messageId: accepted.messageId };
  },
  format(r) {
    return `📨 Queued for session ${r.sessionId} (message ${r.messageId}).`;
  },
});
