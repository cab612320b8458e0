// The texts that wake the orchestrator about a coding session: who, what state, the tail of its output, and the tool
// calls to use next.
import { formatDuration, truncate } from '../../coding/format.ts';
import type { WaitingReason } from '../../coding/session-log.ts';
import type { StoredSession } from '../../store/coding-session-types.ts';

/** Longest output tail an event carries. */
export const TAIL_CHARS = 500;
/** Output blocks the tail is taken from. */
export const TAIL_BLOCKS = 5;

const WAITING_WHY: Record<WaitingReason, string> = {
  question: 'it asked a question',
  permission:
    'it asks permission to use a tool; the user decides approvals in their chat (the approvals tool lists them), so tell them rather than answering it yourself',
  'turn-end': 'it finished its turn',
  stalled: 'it has been silent with no tool running (still thinking, or stuck); it is not waiting for an answer',
};

/** The last `TAIL_BLOCKS` output blocks, joined, cut to the last `TAIL_CHARS` characters (marked with "…"). */
export function outputTail(blocks: readonly string[]): string {
  return capTail(blocks.slice(-TAIL_BLOCKS).join('\n'));
}

/** Cuts text to its last `TAIL_CHARS` characters, the cut marked with a leading "…". */
export function capTail(text: string): string {
  const t = text.trim();
  return t.length > TAIL_CHARS ? `…${t.slice(-(TAIL_CHARS - 1))}` : t;
}

type SessionFacts = Pick<StoredSession, 'id' | 'name' | 'status' | 'workdir' | 'harness' | 'originChannel'>;

function lines(head: string, status: string, s: SessionFacts, tail: string, hint: string): string {
  return [
    head,
    `Status: ${status}`,
    `Harness: ${s.harness} · workdir: ${s.workdir} · origin channel: ${s.originChannel}`,
    'Last output:',
    tail || '(no output yet)',
    '',
    hint,
  ].join('\n');
}

/** The event for a session that ended a turn waiting for input. `preview` is the tail the session reported. */
export function waitingEventText(s: SessionFacts, reason: WaitingReason, preview: string): string {
  return lines(
    `🔔 Coding session "${s.name}" [${s.id}] is waiting for input: ${WAITING_WHY[reason]}.`,
    `${s.status}, waiting (${reason})`,
    s,
    capTail(preview),
    `Answer with claude_respond(session='${s.id}', message='...') · full output: claude_output(session='${s.id}', full=true)`,
  );
}

/** The event for a session that completed, failed, was killed or was interrupted by a daemon stop or crash. */
export function endedEventText(
  s: SessionFacts & Pick<StoredSession, 'error' | 'endReason' | 'costUsd' | 'startedAt' | 'completedAt'>,
  tail: string,
): string {
  const why = s.error ? truncate(s.error, 200) : (s.endReason ?? '');
  const head =
    s.status === 'completed'
      ? `✅ Coding session "${s.name}" [${s.id}] completed${why ? ` (${why})` : ''}.`
      : s.status === 'failed'
        ? `❌ Coding session "${s.name}" [${s.id}] failed${why ? `: ${why}` : ''}.`
        : s.status === 'killed'
          ? `⛔ Coding session "${s.name}" [${s.id}] was killed${why ? ` (${why})` : ''}.`
          : `⏸️ Coding session "${s.name}" [${s.id}] was interrupted when the daemon stopped${why ? ` (${why})` : ''}; its agent is no longer running.`;
  const ran = s.completedAt !== null ? ` · ran ${formatDuration(s.completedAt - s.startedAt)}` : '';
  const hint =
    s.status === 'completed'
      ? `Full output: claude_output(session='${s.id}', full=true)`
      : `Full output: claude_output(session='${s.id}', full=true) · continue it: claude_resume(session='${s.id}', prompt='...')`;
  return lines(head, `${s.status} · cost $${s.costUsd.toFixed(4)}${ran}`, s, capTail(tail), hint);
}
