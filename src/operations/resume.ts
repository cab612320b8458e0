import { z } from 'zod';
import { resumeAnywherePrompt } from '../coding/resume-anywhere.ts';
import { AppError, conflict, invalidInput } from '../core/errors.ts';
import { sessionRef, summaryOf } from './common.ts';
import { formatSessionList, truncate } from './format.ts';
import type { OperationContext } from './operation.ts';
import { callerChannel, commandChannel, defineOperation } from './operation.ts';
import { onSessionNode } from './remote.ts';
import type { SessionSummary } from './session-summary.ts';

const input = z.strictObject({
  session: sessionRef.optional(),
  prompt: z.string().trim().min(1).optional().describe('what to do next (default "Continue where you left off.")'),
  fork: z.boolean().optional().describe('continue as a new session, leaving the original as it is'),
  list: z.boolean().optional().describe('list the sessions that can be resumed'),
  anywhere: z
    .boolean()
    .optional()
    .describe("when the session's node is down: start a new session elsewhere with switchboard's log of it as context"),
});

type ResumeResult =
  | { kind: 'resumed'; session: SessionSummary; prompt: string }
  /** resume --anywhere: a new session (`session`) continues `from`, whose node is down. */
  | { kind: 'elsewhere'; session: SessionSummary; from: string; lostNode: string }
  | { kind: 'list'; sessions: SessionSummary[] };

/**
 * resume --anywhere: when the session's node is down, a new session (placed like any launch) continues it with what
 * switchboard logged of it; undefined when its node is up or it is this node's (resumed there, as usual).
 */
async function resumeElsewhere(
  ctx: OperationContext,
  ref: string,
  next: string | undefined,
): Promise<ResumeResult | undefined> {
  const { clusterSessions, sessions } = ctx.services;
  if (!clusterSessions) return undefined;
  const old = await sessions.get(ref);
  if (!old.node || old.node === clusterSessions.name || (await clusterSessions.nodeUp(old.node))) return undefined;
  if (old.status === 'starting' || old.status === 'running' || old.status === 'queued')
    throw conflict(`session ${old.name} is ${old.status}; it cannot be resumed`);
  const blocks = (await sessions.readOutputBlocks(old)).map((b) => b.text);
  const channel = callerChannel(ctx.caller);
  const placed = await clusterSessions.launch(
    {
      prompt: resumeAnywherePrompt(old, blocks, next),
      harness: old.harness,
      name: `${old.name}-cont`,
      workdir: old.workdir,
      ...(old.model ? { model: old.model } : {}),
      maxBudgetUsd: old.spec.maxBudgetUsd,
      permissionMode: old.spec.permissionMode,
      ...(old.spec.systemPrompt ? { systemPrompt: old.spec.systemPrompt } : {}),
      ...(old.spec.allowedTools ? { allowedTools: old.spec.allowedTools } : {}),
      multiTurn: old.spec.multiTurn,
      originChannel: channel ?? old.originChannel,
      originSessionId: old.originSessionId,
      ...commandChannel(ctx.caller),
    },
    {},
    { resumedFrom: old.id },
  );
  const session = summaryOf(ctx, placed.session?.record ?? placed.record);
  return {
    kind: 'elsewhere',
    session: placed.position === null ? session : { ...session, queuePosition: placed.position },
    from: old.name,
    lostNode: old.node,
  };
}

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
    if (args.anywhere) {
      const elsewhere = await resumeElsewhere(ctx, args.session, args.prompt);
      if (elsewhere) return elsewhere;
    }
    // The agent keeps its own history on the node that ran the session: it resumes there.
    const remote = await onSessionNode<ResumeResult>(ctx, args.session, 'resume', args, { ended: true }).catch(
      (error: unknown) => {
        if (error instanceof AppError && error.kind === 'unavailable')
          throw new AppError(
            'unavailable',
            `${error.message}: resume --anywhere starts a new session elsewhere with its log as context`,
          );
        throw error;
      },
    );
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
      case 'elsewhere':
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
    if (r.kind === 'elsewhere')
      return `↩️ [${s.name}] Continues ${r.from} (node ${r.lostNode} is down) as a new ${s.harness} session with switchboard's log of it as context${s.status === 'queued' ? ', queued for a free slot' : s.node ? ` on ${s.node}` : ''}\n   ID: ${s.id}\n   📁 ${s.workdir}`;
    return `↩️ [${s.name}] Resumed${s.forked ? ` as a fork of ${s.resumedFrom}` : ''} (${s.harness})\n   ID: ${s.id}\n   📁 ${s.workdir}\n   📝 "${truncate(r.prompt, 80)}"`;
  },
});
