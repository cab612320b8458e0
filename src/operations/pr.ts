import { z } from 'zod';
import { conflict } from '../core/errors.ts';
import type { PullRequestResult } from '../github/pull-requests.ts';
import { sessionRef } from './common.ts';
import { defineOperation } from './operation.ts';

const input = z.strictObject({
  session: sessionRef,
  title: z
    .string()
    .trim()
    .min(1)
    .max(256)
    .optional()
    .describe("the PR's title and commit message (default: the prompt's first line)"),
  draft: z.boolean().optional().describe('open it as a draft (default: github.draft)'),
  base: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9._/-]+$/, 'a branch name')
    .max(200)
    .optional()
    .describe("the branch to merge into (default: the repository's default branch)"),
});

/** The session's pull request, as `session_pr` answers it. */
export interface PrResult extends PullRequestResult {
  session: { id: string; name: string };
}

/** How many of the agent's last output blocks go in the PR's body. */
const LAST_BLOCKS = 1;

/**
 * Commits what the session left uncommitted, pushes its branch and opens a pull request (once: a repeat answers the
 * same PR). Needs the GitHub integration (`github.enabled`).
 */
export const prOperation = defineOperation({
  name: 'session_pr',
  summary: "Open a pull request with a session's work",
  input,
  aliases: { id: 'session' },
  needs: ['github'],
  expose: {
    tool: 'claude_pr',
    command: { name: 'claude_pr', positional: ['session', 'title'], usage: '/claude_pr <id-or-name> [title]' },
    rpc: 'sessions.pr',
    cli: { name: 'pr', args: ['<session>'] },
  },
  async run(ctx, args): Promise<PrResult> {
    const { sessions, github } = ctx.services;
    const record = await sessions.get(args.session);
    const live = sessions.liveById(record.id);
    // Committing while the agent writes would take half-done work: only between turns (or once it ended).
    if (live?.isActive && (live.waitingFor === null || live.waitingFor === 'stalled'))
      throw conflict(`[${record.name}] is still working; open the pull request once its turn has ended`);
    const blocks = sessions.outputBlocks(record).map((b) => b.text);
    const result = await github.pullRequests.open({
      session: {
        id: record.id,
        name: record.name,
        harness: record.harness,
        prompt: record.prompt,
        costUsd: record.costUsd,
        lastOutput: blocks.slice(-LAST_BLOCKS),
        pageBase: github.pageBase(),
      },
      workdir: record.workdir,
      ...(args.title ? { title: args.title } : {}),
      ...(args.draft !== undefined ? { draft: args.draft } : {}),
      ...(args.base ? { base: args.base } : {}),
    });
    return { ...result, session: { id: record.id, name: record.name } };
  },
  format(r) {
    const head =
      r.outcome === 'opened'
        ? `🔀 [${r.session.name}] Pull request #${r.number} opened`
        : `🔀 [${r.session.name}] Pull request #${r.number} (opened before)`;
    const lines = [head, `   ${r.url}`, `   ${r.repo}: ${r.branch} → ${r.base}`];
    if (r.committed) lines.push(`   committed: "${r.committed}"`);
    return lines.join('\n');
  },
});
