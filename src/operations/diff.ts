import { z } from 'zod';
import { cutAtLine, fencedCode, MAX_FILE_BYTES } from '../channels/outbox-file.ts';
import type { FileChange, WorkdirDiff } from '../coding/git-diff.ts';
import { diffWorkdir } from '../coding/git-diff.ts';
import type { Config } from '../core/config.ts';
import { sessionRef } from './common.ts';
import type { Caller, ChatReply } from './operation.ts';
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
  /**
   * For a chat caller: the patch as the file a chat that takes files gets (up to CHAT_FILE_PATCH_BYTES, `truncated`
   * when cut there), while `patch` holds what a chat message shows inline.
   */
  patchFile?: { content: string; truncated: boolean };
}

/** How much patch a chat shows inline (a few messages; the outbox splits it). */
const CHAT_INLINE_PATCH_BYTES = 24 * 1024;
/** How much patch a chat's file holds: what the outbox sends as a file, less room for the line saying it was cut. */
const CHAT_FILE_PATCH_BYTES = MAX_FILE_BYTES - 1024;
/** The note of a patch cut to what the answer holds. */
const PATCH_CUT_NOTE = 'The patch was cut: it is larger than this answer holds. See it whole with `switchboard diff`.';

/**
 * How much patch each caller gets: a chat what its file holds (cut again to a few messages for the inline form), the
 * orchestrator what fits a tool result, the CLI and the web page the whole of a large change.
 */
function maxPatchBytes(caller: Caller, config: Config): number {
  switch (caller.kind) {
    case 'chat':
      return CHAT_FILE_PATCH_BYTES;
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
  return fencedCode(patch, 'diff');
}

function formatDiff(result: SessionDiffResult): string {
  const stat = formatDiffStat(result);
  return result.patch ? `${stat}\n\n${fenced(result.patch)}` : stat;
}

/**
 * A chat's answer: with a patch, the stat summary as the text and `<session>.patch` (text/x-diff) as the file, the
 * inline form (the summary and the patch in a fence, cut to a few messages) for chats that cannot take files.
 */
function diffChatReply(result: SessionDiffResult): ChatReply {
  const file = result.patchFile;
  if (!file || file.content === '') return { text: formatDiff(result) };
  const notes = result.notes.filter((note) => note !== PATCH_CUT_NOTE);
  const name = result.session.name.replace(/[^\w.-]+/g, '-').slice(0, 100);
  if (file.truncated) {
    notes.push(
      `The patch file was cut at ${CHAT_FILE_PATCH_BYTES} bytes. See it whole with \`switchboard diff ${name}\`.`,
    );
  }
  const cutLine = `\n# switchboard: the patch was cut here; see it whole with \`switchboard diff ${name}\`\n`;
  return {
    text: formatDiffStat({ ...result, notes }),
    file: {
      name: `${name}.patch`,
      contentType: 'text/x-diff',
      content: file.truncated ? `${file.content}${cutLine}` : file.content,
      inline: formatDiff(result),
    },
  };
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
    // A chat gets the patch twice: whole (up to its file's limit) as the file, and cut to a few messages inline.
    const inline =
      ctx.caller.kind === 'chat' && diff.patch !== undefined ? cutAtLine(diff.patch, CHAT_INLINE_PATCH_BYTES) : null;
    const truncated = diff.truncated || inline?.cut === true;
    if (truncated) notes.push(PATCH_CUT_NOTE);
    return {
      session: { id: record.id, name: record.name },
      workdir: record.workdir,
      baseFrom: recorded ? 'launch' : 'head',
      notes,
      ...diff,
      ...(inline && diff.patch !== undefined
        ? { patch: inline.text, truncated, patchFile: { content: diff.patch, truncated: diff.truncated } }
        : {}),
    };
  },
  format: formatDiff,
  chatReply: diffChatReply,
});
