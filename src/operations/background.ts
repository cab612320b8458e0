import { z } from 'zod';
import { invalidInput } from '../core/errors.ts';
import { sessionRef } from './common.ts';
import { callerChannel, defineOperation } from './operation.ts';

const input = z.strictObject({
  session: sessionRef.optional().describe('the session to detach (default: every session streaming to this chat)'),
  channel: z.string().trim().min(1).optional(),
});

/** Stops streaming a session (or all sessions) to the caller's channel, remembering where it left off. */
export const backgroundOperation = defineOperation({
  name: 'background',
  summary: 'Stop streaming a session (or every session) to this chat',
  input,
  aliases: { id: 'session' },
  expose: {
    tool: 'claude_bg',
    command: { name: 'claude_bg', positional: ['session'], usage: '/claude_bg [id-or-name]' },
  },
  async run(ctx, args): Promise<{ channel: string; detached: string[] }> {
    const channel = args.channel ?? callerChannel(ctx.caller);
    if (!channel) throw invalidInput('channel: background needs the chat channel to detach', 'channel');
    const { sessions } = ctx.services;
    const targets = args.session
      ? [await sessions.get(args.session)]
      : (await sessions.list()).filter((s) => s.foreground[channel]?.on);
    for (const record of targets) await sessions.setView(record, channel, false);
    return { channel, detached: targets.map((t) => t.name) };
  },
  format(r) {
    if (r.detached.length === 0) return 'No session is streaming to this chat.';
    return `⏸️ Moved to background: ${r.detached.join(', ')}. Use claude_fg to catch up later.`;
  },
});
