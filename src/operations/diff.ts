import { z } from 'zod';
import type { FileChange, WorkdirDiff } from '../coding/git-diff.ts';
import { diffWorkdir } from '../coding/git-diff.ts';
import type { Config } from '../core/config.ts';
import { sessionRef } from './common.ts';
import type { Caller } from './operation.ts';
import { defineOperation } from './operation.ts';

const input = z.strictObject({
  session: sessionRef,
  stat: z.boolean().optional().describe('only the per-file summary of added and removed lines, no patch'),
});

/** What `session_diff` answers: a session's changes against the commit it started from. */
export interface SessionDiffResult extends WorkdirDiff {
  session: { id: string; name: string };
  workdir: string;
  /**
   * `launch`: the commit recorded when the session was launched. `head`: the session has no recorded base (it was
   * launched before bases were recorded, or outside a repository with commits), so only the changes since HEAD show.
   */
  baseFrom: 'launch' | 'head';
  /** Said to people when the result needs a word of explanation (no recorded base, a cut patch). */
  notes: string[];
}

/**
 * How much patch each caller gets: a chat gets what a few messages hold (the outbox splits it), the orchestrator what
 * fits a tool result, the CLI and the web page the whole of a large change.
 */
function maxPatchBytes(caller: Caller, config: Config): number {
  switch (caller.kind) {
    case 'chat':
      return 24 * 1024;
    case 'agent':
      return 64 * 1024;
    case 'rpc':
    case 'cli':
      // JSON escaping can grow a patch: a quarter of the response limit leaves room for it.
      return Math.min(2 * 1024 * 1024, Math.floor(config.gateway.maxResponseBytes / 4));
  }
}

const STATUS_MARK: Record<FileChange['status'], string> = { added: 'A', modified: 'M', deleted: 'D', renamed: 'R' };

/** The per-file summary: one line per file (`M +3 -1 src/a.ts`) and a totals line. */
export function formatDiffStat(result: SessionDiffResult): string {
  const lines = result.files.map((f) => {
    const counts = f.binary ? 'binary' : `+${f.additions} -${f.deletions}`;
    const path = f.from !== undefined ? `${f.from} → ${f.path}` : f.path;
    return `${STATUS_MARK[f.status]} ${counts} ${path}`;
  });
  const { files, additions, deletions } = result.totals;
  const against = `${result.base.slice(0, 12)}${result.baseFrom === 'head' ? ' (HEAD)' : ''}`;
  const head =
    files === 0
      ? `No changes in ${result.session.name} since ${against}.`
      : `${result.session.name}: ${files} file${files === 1 ? '' : 's'} changed, +${additions} -${deletions} since ${against}`;
  return [head, ...lines, ...result.notes].join('\n');
}

/**
 * The patch in a ```diff fence, so chats show it as code (Telegram's Markdown would otherwise read `_` and `*` in it),
 * and the outbox's splitting keeps each part fenced. The fence is longer than any backtick run that opens a line of
 * the patch, so no line of it closes the fence.
 */
function fenced(patch: string): string {
  let longest = 2;
  for (const match of patch.matchAll(/^ {0,3}(`+)/gm)) longest = Math.max(longest, match[1]?.length ?? 0);
  const fence = '`'.repeat(longest + 1);
  return `${fence}diff\n${patch.endsWith('\n') ? patch : `${patch}\n`}${fence}`;
}

function formatDiff(result: SessionDiffResult): string {
  const stat = formatDiffStat(result);
  return result.patch ? `${stat}\n\n${fenced(result.patch)}` : stat;
}

/** A session's changes (committed, uncommitted and new files) against the commit its working directory started at. */
export const sessionDiffOperation = defineOperation({
  name: 'session_diff',
  summary: 'Show what a session changed in its working directory (against the commit it started from)',
  input,
  aliases: { id: 'session' },
  expose: {
    tool: 'claude_diff',
    command: { name: 'claude_diff', positional: ['session'], usage: '/claude_diff <id-or-name>' },
    rpc: 'sessions.diff',
    cli: { name: 'diff', args: ['<session>'] },
  },
  async run(ctx, args): Promise<SessionDiffResult> {
    const record = await ctx.services.sessions.get(args.session);
    const recorded = record.spec.baseCommit;
    const diff = await diffWorkdir(record.workdir, {
      ...(recorded ? { base: recorded } : {}),
      statOnly: args.stat === true,
      maxPatchBytes: maxPatchBytes(ctx.caller, ctx.services.config),
    });
    const notes: string[] = [];
    if (!recorded) {
      notes.push(
        'No base commit was recorded for this session (launched before bases were recorded, or its workdir had no commits then): diffed against HEAD, so committed changes do not show.',
      );
    }
    if (diff.nestedRepositories) {
      notes.push(
        `New folders that are git repositories of their own are not diffed: ${diff.nestedRepositories.join(', ')}`,
      );
    }
    if (diff.untrackedCut)
      notes.push(
        'There are too many new files to list them all: some are left out (are they meant to be in .gitignore?).',
      );
    if (diff.truncated)
      notes.push('The patch was cut: it is larger than this answer holds. See it whole with `switchboard diff`.');
    return {
      session: { id: record.id, name: record.name },
      workdir: record.workdir,
      baseFrom: recorded ? 'launch' : 'head',
      notes,
      ...diff,
    };
  },
  format: formatDiff,
});
