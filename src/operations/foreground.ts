import { z } from 'zod';
import { invalidInput } from '../core/errors.ts';
import { sessionRef, summaryOf } from './common.ts';
import { callerChannel, defineOperation } from './operation.ts';
import type { SessionSummary } from './session-summary.ts';

const input = z.strictObject({
  session: sessionRef,
  lines: z
    .number()
    .int()
    .positive()
    .max(1_000)
    .default(30)
    .describe('blocks to show when there is nothing to catch up on'),
  channel: z.string().trim().min(1).optional().describe('the channel to stream to (default: the caller’s)'),
});

export interface ForegroundResult {
  session: SessionSummary;
  channel: string;
  /** `catchup`: what the channel missed since it last looked; `recent`: the last N blocks. */
  mode: 'catchup' | 'recent';
  lines: string[];
}

/** Streams a session's output live to the caller's channel, first showing what it missed. */
export const foregroundOperation = defineOperation({
  name: 'foreground',
  summary: "Stream a session's output live to this chat, catching up on what was missed",
  input,
  aliases: { id: 'session' },
  expose: {
    tool: 'claude_fg',
    command: { name: 'claude_fg', positional: ['session'], usage: '/claude_fg <id-or-name>' },
  },
  async run(ctx, args): Promise<ForegroundResult> {
    const channel = args.channel ?? callerChannel(ctx.caller);
    if (!channel) throw invalidInput('channel: foreground needs a chat channel to stream to', 'channel');
    const { sessions } = ctx.services;
    const record = await sessions.get(args.session);
    const view = record.foreground[channel];
    const missed = view ? sessions.outputBlocks(record, view.seenSeq) : [];
    const mode = missed.length > 0 ? 'catchup' : 'recent';
    const lines = (mode === 'catchup' ? missed : sessions.outputBlocks(record).slice(-args.lines)).map((b) => b.text);
    await sessions.setView(record, channel, true);
    return { session: summaryOf(ctx, await sessions.get(record.id)), channel, mode, lines };
  },
  format(r) {
    const head =
      r.mode === 'catchup'
        ? `📋 Catchup (${r.lines.length} missed output${r.lines.length === 1 ? '' : 's'}):`
        : `📋 ${r.session.name} [${r.session.id}] — last ${r.lines.length} output${r.lines.length === 1 ? '' : 's'}:`;
    const body = r.lines.length > 0 ? r.lines.join('\n') : '(no output yet)';
    const tail =
      r.session.status === 'running' || r.session.status === 'starting'
        ? 'Streaming new output... Use claude_bg to detach.'
        : `Session is ${r.session.status}.`;
    return `${head}\n${body}\n\n${tail}`;
  },
});
