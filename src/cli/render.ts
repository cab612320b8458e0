import type { Approval } from '../approvals/approval.ts';
import { approvalLine } from '../approvals/approval-text.ts';
import { toolUseLine } from '../coding/tool-summary.ts';

/** A session log record as the CLI receives it over SSE. */
export type WireRecord = { seq: number; type: string } & Record<string, unknown>;

const TERMINAL = new Set(['completed', 'failed', 'killed', 'interrupted']);

/** What following a session decides after a record: keep going, or stop with an exit code. */
export type FollowStep = { done: false } | { done: true; exitCode: number };

/** Renders one log record as terminal lines (empty for records not worth showing). */
export function renderRecord(record: WireRecord, name: string): string[] {
  switch (record.type) {
    case 'output':
      return [String(record.text)];
    case 'tool':
      return [toolUseLine(String(record.name), record.input)];
    case 'toolResult':
      return record.isError
        ? [`   ↳ tool failed${record.output ? `: ${String(record.output).slice(0, 200)}` : ''}`]
        : [];
    case 'user':
      return record.source === 'launch' || record.source === 'resume' ? [] : [`> ${String(record.text)}`];
    case 'question':
      return [`❓ ${String(record.text)}`];
    case 'permission':
      return [`🔐 permission requested for ${toolUseLine(String(record.tool), record.input)}`];
    case 'approval':
      return approvalLines(record.approval);
    case 'warning':
      return [`⚠️ ${String(record.message)}`];
    case 'turn': {
      const outcome = record.outcome as { ok: boolean; message?: string };
      const cost = typeof record.costUsd === 'number' && record.costUsd > 0 ? ` ($${record.costUsd.toFixed(4)})` : '';
      return outcome.ok ? [`— turn done${cost}`] : [`— turn ended: ${outcome.message ?? 'error'}${cost}`];
    }
    case 'waiting':
      if (record.reason === 'stalled') {
        return [
          `⏳ ${name} has been silent for a while (no output, no tool running); still following. Nudge it with: switchboard send ${name} "<message>"`,
        ];
      }
      return [
        `💬 ${name} is waiting for input (${String(record.reason)}). Reply with: switchboard send ${name} "<message>"`,
      ];
    case 'status': {
      const status = String(record.status);
      if (!TERMINAL.has(status)) return [];
      const why = record.error ? `: ${String(record.error)}` : record.endReason ? ` (${String(record.endReason)})` : '';
      return [`■ ${name} ${status}${why}`];
    }
    default:
      return [];
  }
}

/**
 * Whether following should stop after this record: on a real wait for input (a question, a permission request, a turn
 * end: 0), or when the session ends (0, or 1 if it failed). A `stalled` wait is only silence (a model thinking for
 * long, say): following goes on through it.
 */
export function followStep(record: WireRecord): FollowStep {
  if (record.type === 'waiting') return record.reason === 'stalled' ? { done: false } : { done: true, exitCode: 0 };
  if (record.type === 'status' && TERMINAL.has(String(record.status))) {
    return { done: true, exitCode: record.status === 'failed' ? 1 : 0 };
  }
  return { done: false };
}

/** An approval record of the log: the request with how to decide it, or its outcome. */
function approvalLines(value: unknown): string[] {
  if (typeof value !== 'object' || value === null) return [];
  const approval = value as Approval;
  if (approval.status !== 'pending') return [`   ↳ ${approvalLine(approval)}`];
  return [
    `🔐 approval ${approval.id}: ${approval.summary} — switchboard approve ${approval.id} [--session|--always] | switchboard deny ${approval.id} [why]`,
  ];
}
