import { z } from 'zod';
import { sessionRef, summaryOf } from './common.ts';
import { formatDuration, statusIcon } from './format.ts';
import { defineOperation } from './operation.ts';
import type { SessionSummary } from './session-summary.ts';

const input = z.strictObject({
  session: sessionRef,
  lines: z.number().int().positive().max(10_000).default(50).describe('how many output blocks (default 50)'),
  full: z.boolean().optional().describe('every output block the session ever produced'),
});

export interface OutputResult {
  session: SessionSummary;
  lines: string[];
  /** Blocks the session has produced in all. */
  totalBlocks: number;
  /** The log seq the output is current to: stream from here to follow it. */
  lastSeq: number;
  /** The final answer of a completed session (its last output block), else null. */
  result: string | null;
}

/** Reads a session's recent output. */
export const outputOperation = defineOperation({
  name: 'output',
  summary: "Show a session's recent output",
  input,
  aliases: { id: 'session' },
  expose: {
    tool: 'claude_output',
    rpc: 'sessions.output',
    cli: { name: 'output', args: ['<session>'] },
  },
  async run(ctx, args): Promise<OutputResult> {
    const { sessions } = ctx.services;
    const record = sessions.get(args.session);
    const lastSeq = sessions.lastSeq(record.id);
    const blocks = sessions.outputBlocks(record);
    const shown = args.full ? blocks : blocks.slice(-args.lines);
    const last = blocks[blocks.length - 1];
    return {
      session: summaryOf(ctx, record),
      lines: shown.map((b) => b.text),
      totalBlocks: blocks.length,
      lastSeq,
      result: record.status === 'completed' && last ? last.text : null,
    };
  },
  format(r) {
    const s = r.session;
    const head = `${statusIcon(s.status)} ${s.name} [${s.id}] ${s.status} (${formatDuration(s.durationMs)})${s.costUsd > 0 ? ` $${s.costUsd.toFixed(4)}` : ''}`;
    if (r.lines.length === 0) return `${head}\n(no output yet)`;
    const more = r.totalBlocks > r.lines.length ? `(last ${r.lines.length} of ${r.totalBlocks} blocks)\n` : '';
    return `${head}\n${more}${r.lines.join('\n')}`;
  },
});
