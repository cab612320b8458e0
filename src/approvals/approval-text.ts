// How an approval reads in chat, in the CLI and in tool results: the request with its buttons, and its outcome.
import type { ChatButton } from '../channels/connector.ts';
import { truncate } from '../coding/format.ts';
import type { Approval } from './approval.ts';

/** Longest summary shown in one line. */
const SUMMARY_CHARS = 200;

function verb(approval: Approval): string {
  return approval.tool === 'Bash' ? 'wants to run' : 'wants to use';
}

/** The request as a person reads it: `🔐 [fix-parser] wants to run Bash: npm test`, or the question with its choices. */
export function requestText(approval: Approval): string {
  if (approval.kind === 'question') {
    const lines = [`❓ [${approval.session}] asks:`];
    for (const q of approval.questions) {
      lines.push(q.question, ...q.options.map((o, i) => `   ${i + 1}. ${o}`));
    }
    lines.push(`   Answer: /approve ${approval.id} <number>${approval.questions.length > 1 ? ' <number>…' : ''}`);
    return lines.join('\n');
  }
  return [
    `🔐 [${approval.session}] ${verb(approval)} ${truncate(approval.summary, SUMMARY_CHARS)}`,
    `   /approve ${approval.id} [session|always] · /deny ${approval.id} [why]`,
  ].join('\n');
}

/** Buttons under a request: Allow · Allow for session · Always · Deny, or a question's options (single question). */
export function requestButtons(approval: Approval): ChatButton[][] {
  if (approval.kind === 'question') {
    const [only] = approval.questions;
    if (approval.questions.length !== 1 || !only || only.multiSelect) return [];
    return [
      ...only.options.map((label, i) => [{ label: truncate(label, 40), command: `/approve ${approval.id} ${i + 1}` }]),
      [{ label: 'Deny', command: `/deny ${approval.id}` }],
    ];
  }
  return [
    [
      { label: 'Allow', command: `/approve ${approval.id}` },
      { label: 'Allow for session', command: `/approve ${approval.id} session` },
    ],
    [
      { label: 'Always', command: `/approve ${approval.id} always` },
      { label: 'Deny', command: `/deny ${approval.id}` },
    ],
  ];
}

/** The outcome in a few words: `allowed for this session by telegram|42`, `denied by web: not now`, `pending`. */
export function outcomeText(approval: Approval): string {
  const by = approval.decidedBy ? ` by ${approval.decidedBy}` : '';
  switch (approval.status) {
    case 'pending':
      return 'pending';
    case 'allowed': {
      if (approval.kind === 'question') return `answered${by}: ${approval.message ?? ''}`.trim();
      const scope =
        approval.scope === 'session' ? ' for this session' : approval.scope === 'always' ? ' always (rule stored)' : '';
      return `allowed${scope}${by}`;
    }
    case 'denied':
      return `denied${by}${approval.message ? `: ${approval.message}` : ''}`;
    case 'expired':
    case 'cancelled':
      return `${approval.status}${approval.message ? `: ${approval.message}` : ''}`;
    default:
      approval.status satisfies never;
      return String(approval.status);
  }
}

const ICONS: Record<Approval['status'], string> = {
  pending: '🔐',
  allowed: '✅',
  denied: '⛔',
  expired: '⌛',
  cancelled: '🚫',
};

/** One line per approval: `✅ k3x9q [fix-parser] Bash: npm test — allowed for this session by cli`. */
export function approvalLine(approval: Approval): string {
  return `${ICONS[approval.status]} ${approval.id} [${approval.session}] ${truncate(approval.summary, 120)} — ${outcomeText(approval)}`;
}

/** What the request's chat message becomes once decided (its buttons removed). */
export function decidedText(approval: Approval): string {
  return `${ICONS[approval.status]} [${approval.session}] ${truncate(approval.summary, SUMMARY_CHARS)}\n   ${outcomeText(approval)}`;
}
