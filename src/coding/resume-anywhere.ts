// `resume --anywhere`: the node that ran a session is down, and its agent's own history is on that node's disk, so a
// new agent session starts elsewhere, told what switchboard logged of the old one: its task and its last output.
import { truncate } from './format.ts';

/** How many of the old session's last output blocks the new prompt carries. */
const CONTEXT_BLOCKS = 5;
/** At most this many characters of each block. */
const BLOCK_CHARS = 2_000;

/**
 * The prompt of the session that continues `old` on another node: the old task, its last output blocks (as logged),
 * and what to do next (`next`, default: continue where it left off).
 */
export function resumeAnywherePrompt(
  old: { name: string; prompt: string; node: string | null },
  blocks: readonly string[],
  next: string | undefined,
): string {
  const last = blocks.slice(-CONTEXT_BLOCKS).map((b) => truncate(b, BLOCK_CHARS));
  return [
    `You are continuing the coding session "${old.name}", which ran on node ${old.node ?? 'unknown'}; that node is down,`,
    'so its own conversation history is not available here. This is what was logged of it.',
    '',
    'Its task was:',
    old.prompt,
    '',
    last.length > 0 ? 'Its last output was:' : 'It had produced no output yet.',
    ...last.flatMap((b) => ['---', b]),
    ...(last.length > 0 ? ['---'] : []),
    '',
    `Now: ${next?.trim() ? next : 'continue where it left off (check the working tree first: it may hold its edits).'}`,
  ].join('\n');
}
