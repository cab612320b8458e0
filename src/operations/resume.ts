import { z } from 'zod';
import { invalidInput } from '../core/errors.ts';
import { sessionRef, summaryOf } from './common.ts';
import { formatSessionList, truncate } from './format.ts';
import { callerChannel, commandChannel, defineOperation } from './operation.ts';
import { onSessionNode } from './remote.ts';
import type { SessionSummary } from './session-summary.ts';

const input = z.strictObject({
  session: sessionRef.optional(),
  prompt: z.string().trim().min(1).optional().describe('what to do next (default "Continue where you left off.")'),
  fork: z.boolean().optional().describe('continue as a new session, leaving the original as it is'),
  list: z.boolean().optional().describe('list the sessions that can be resumed'),
});

type ResumeResult =
  { kind: 'resumed'; session: SessionSummary; prompt: string } | { kind: 'list'; sessions: SessionSummary[] };

/** Resumes a finished, failed, killed or interrupted session where it stopped. */
export const resumeOperation = defineOperation({
  name: 'resume',
  summary: 'Resume a session that is not running (in place, or as a fork)',
  input,
  aliases: { id: 'session' },
  expose: {
    tool: 'claude_resume',
    command: {
      name: 'claude_resume',
      positional: ['session', 'prompt'],
      usage: '/claude_resume <id-or-name> [prompt] · --list · --fork <id-or-name> [prompt]',
    },
    rpc: 'sessions.resume',
    cli: { name: 'resume', args: ['<session>', '[prompt...]'], hide: ['list'] },
  },
  async run(ctx, args): Promise<ResumeResult> {
    const { sessions } = ctx.services;
    if (args.list) {
      const resumable = (await sessions.list(['completed', 'failed', 'killed', 'interrupted']))
        .filter((s) => s.backendSessionId)
        .map((r) => summaryOf(ctx, r));
      return { kind: 'list', sessions: resumable };
    }
    if (!args.session) throw invalidInput('session: give the session to resume (or --list)', 'session');
    // The agent keeps its own history on the node that ran the session: it resumes there.
    const remote = await onSessionNode<ResumeResult>(ctx, args.session, 'resume', args);
    if (remote) return remote;
    const channel = callerChannel(ctx.caller);
    const session = await sessions.resumeSoon(args.session, {
      ...(args.prompt ? { prompt: args.prompt } : {}),
      ...(args.fork ? { fork: true } : {}),
      ...(channel ? { originChannel: channel } : {}),
      ...commandChannel(ctx.caller),
    });
    return { kind: 'resumed', session: summaryOf(ctx, session.record), prompt: session.record.spec.prompt };
  },
  follow(r) {
    switch (r.kind) {
      case 'resumed':
        return { kind: 'session', session: r.session, from: r.session.runStartSeq ?? 1 };
      case 'list':
        return { kind: 'none' };
    }
  },
  format(r) {
    if (r.kind === 'list')
      return r.sessions.length > 0
        ? `Resumable sessions:\n\n${formatSessionList(r.sessions, 'resumable')}`
        : 'No resumable sessions.';
    const s = r.session;
    return `↩️ [${s.name}] Resumed${s.forked ? ` as a fork of ${s.resumedFrom}` : ''} (${s.harness})\n   ID: ${s.id}\n   📁 ${s.workdir}\n   📝 "${truncate(r.prompt, 80)}"`;
  },
});
