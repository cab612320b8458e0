import { z } from 'zod';
import { toolUseLine } from '../coding/tool-summary.ts';
import type { TranscriptEntry, TranscriptView } from '../coding/transcript.ts';
import { sessionRef, summaryOf } from './common.ts';
import { formatDuration, statusIcon, truncate } from './format.ts';
import { legacyOutput } from './legacy-rpc.ts';
import { defineOperation } from './operation.ts';
import type { SessionSummary } from './session-summary.ts';

const input = z.strictObject({
  session: sessionRef,
  lines: z
    .number()
    .int()
    .positive()
    .max(10_000)
    .default(50)
    .describe('how many entries: text blocks, tool calls, permission requests (default 50)'),
  full: z.boolean().optional().describe('every output block the session ever produced'),
  text: z.boolean().optional().describe('only the text the agent wrote (no tool calls or permission requests)'),
});

export interface OutputResult {
  session: SessionSummary;
  /** The last text blocks (as many as `lines` asks for). */
  lines: string[];
  /** Text blocks the session has produced in all. */
  totalBlocks: number;
  /** The last entries in log order: text, tool calls and permission requests (text only with `text`). */
  entries: TranscriptEntry[];
  /** Entries in all. */
  totalEntries: number;
  /** `text`: only text was asked for. */
  view: TranscriptView;
  /** The log seq the output is current to: stream from here to follow it. */
  lastSeq: number;
  /** The final answer of a completed session (its last output block), else null. */
  result: string | null;
}

const INPUT_CHARS = 300;

/** Reads a session's recent output: what it wrote, the tools it called and a permission request it waits on. */
export const outputOperation = defineOperation({
  name: 'output',
  summary: "Show a session's recent output",
  input,
  aliases: { id: 'session' },
  expose: {
    tool: 'claude_output',
    rpc: 'sessions.output',
    legacyRpc: legacyOutput,
    cli: { name: 'output', args: ['<session>'] },
  },
  async run(ctx, args): Promise<OutputResult> {
    const { sessions } = ctx.services;
    const record = await sessions.get(args.session);
    const lastSeq = await sessions.readLastSeq(record.id);
    const view: TranscriptView = args.text ? 'text' : 'all';
    const entries = await sessions.readTranscript(record, view);
    const blocks = entries.flatMap((e) => (e.kind === 'text' ? [e.text] : []));
    const take = <T>(items: T[]): T[] => (args.full ? items : items.slice(-args.lines));
    const last = blocks[blocks.length - 1];
    return {
      session: summaryOf(ctx, record),
      lines: take(blocks),
      totalBlocks: blocks.length,
      entries: take(entries),
      totalEntries: entries.length,
      view,
      lastSeq,
      result: record.status === 'completed' && last !== undefined ? last : null,
    };
  },
  follow(r) {
    // Following a session that waits for input or has ended would wait forever: there is nothing more to show.
    // A stalled one (silent, e.g. a model thinking) is still working: follow it.
    const waits = r.session.waitingFor !== null && r.session.waitingFor !== 'stalled';
    const idle = waits || (r.session.status !== 'running' && r.session.status !== 'starting');
    if (!idle) return { kind: 'session', session: r.session, from: r.lastSeq + 1 };
    return { kind: 'idle', session: r.session, waitingFor: waits ? r.session.waitingFor : null };
  },
  format(r) {
    const s = r.session;
    const head = `${statusIcon(s.status)} ${s.name} [${s.id}] ${s.status} (${formatDuration(s.durationMs)})${s.costUsd > 0 ? ` $${s.costUsd.toFixed(4)}` : ''}`;
    if (r.view === 'text') {
      if (r.lines.length === 0) return `${head}\n(no output yet)`;
      const more = r.totalBlocks > r.lines.length ? `(last ${r.lines.length} of ${r.totalBlocks} blocks)\n` : '';
      return `${head}\n${more}${r.lines.join('\n')}`;
    }
    if (r.entries.length === 0) return `${head}\n(no output yet)`;
    const more = r.totalEntries > r.entries.length ? `(last ${r.entries.length} of ${r.totalEntries} entries)\n` : '';
    return `${head}\n${more}${r.entries.flatMap(entryLines).join('\n')}`;
  },
});

/** One transcript entry as text lines; a pending permission request shows the tool's whole input and how to answer. */
function entryLines(entry: TranscriptEntry): string[] {
  switch (entry.kind) {
    case 'text':
      return [entry.text];
    case 'tool':
      return [`${toolUseLine(entry.name, entry.input)}${entry.failed ? ' (failed)' : ''}`];
    case 'permission':
      if (entry.state === 'pending') {
        return [
          `🔐 waiting for approval: ${toolUseLine(entry.tool, entry.input)}`,
          `   input: ${truncate(JSON.stringify(entry.input) ?? 'none', INPUT_CHARS)}`,
          '   reply yes to allow, anything else to deny',
        ];
      }
      return [`🔐 ${entry.tool}: ${entry.state}`];
  }
}
