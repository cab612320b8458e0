// How an approval reads in a Linear agent session and how a person's reply there is read back: the request as an
// elicitation with its choices spelled out as they can be typed, the outcome as one line, and the reply parsed into a
// decision (allow / allow for session / always / deny <reason> / an option of a question).
import type { Approval, ApprovalDecision } from '../approvals/approval.ts';
import { approvalLine } from '../approvals/approval-text.ts';
import { resolveAnswers } from '../approvals/questions.ts';
import { truncate } from '../coding/format.ts';
import { AppError } from '../core/errors.ts';

/** Longest request summary shown. */
const SUMMARY_CHARS = 300;

/** What a reply comes to: a decision of its own, or the desk's free-text semantics (`answerText`). */
export type ApprovalReply =
  { kind: 'decide'; decision: ApprovalDecision; message?: string; answers?: string[] } | { kind: 'text' };

const SESSION = /^(?:(?:allow|approve|yes|ok|okay)\s+)?(?:for\s+(?:the\s+|this\s+)?)?session$/;
const ALWAYS = /^(?:(?:allow|approve|yes)\s+)?always$/;
const ONCE = /^(?:allow|approve|yes|y|ok|okay)(?:\s+(?:once|this\s+once|it))?$/;
const DENY = /^(deny|reject|refuse|no|n)(?![\p{L}\p{N}])[\s:,.;!—–-]*([\s\S]*)$/iu;

/** The reply without leading @mentions and surrounding blanks. */
function cleaned(text: string): string {
  return text.replace(/^(?:\s*@[\w.-]+[,:]?)+/, '').trim();
}

/** The reply as a keyword: lower case, blanks collapsed, trailing punctuation dropped. */
function keyword(text: string): string {
  return text
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/[.!]+$/, '')
    .trim();
}

/** True when `answers` name options of every question (labels or numbers). */
function answersFit(approval: Approval, answers: string[]): boolean {
  try {
    resolveAnswers(approval.questions, answers);
    return true;
  } catch (error) {
    if (error instanceof AppError && error.kind === 'invalid_input') return false;
    throw error;
  }
}

/**
 * Reads a person's reply to a pending approval. A tool call: `allow` / `yes` allows once, `allow for session` /
 * `session` for the session, `always` stores a rule, `deny [reason]` denies with the reason (`no …`: the whole reply is the reason). A question: its
 * option (number or label; one line per question when there are several), or `deny [reason]`. Anything else is `text`
 * (the desk's `answerText`: "yes…" allows once, anything else denies with the text as the reason).
 */
export function parseApprovalReply(approval: Approval, text: string): ApprovalReply {
  const reply = cleaned(text);
  if (approval.kind === 'question') {
    const answers =
      approval.questions.length === 1
        ? [reply]
        : reply
            .split(/\n|;/)
            .map((line) => line.trim())
            .filter(Boolean);
    if (answers.length === approval.questions.length && answersFit(approval, answers))
      return { kind: 'decide', decision: 'allow', answers };
  } else {
    const word = keyword(reply);
    if (SESSION.test(word)) return { kind: 'decide', decision: 'allow-session' };
    if (ALWAYS.test(word)) return { kind: 'decide', decision: 'always' };
    if (ONCE.test(word)) return { kind: 'decide', decision: 'allow' };
  }
  const deny = DENY.exec(reply);
  if (deny) {
    // `deny <reason>`: what follows is the reason; `no …`: the whole reply is.
    const rest = (deny[2] ?? '').trim();
    const reason = rest && /^n/i.test(deny[1] ?? '') ? reply : rest;
    return { kind: 'decide', decision: 'deny', ...(reason ? { message: reason } : {}) };
  }
  return { kind: 'text' };
}

/** The request as an elicitation in the agent session: who asks for what, and the replies that decide it. */
export function approvalElicitation(approval: Approval): string {
  if (approval.kind === 'question') {
    const lines = [`❓ **${approval.session}** asks (approval ${approval.id}):`];
    approval.questions.forEach((q, index) => {
      const number = approval.questions.length > 1 ? `${index + 1}) ` : '';
      lines.push('', `${number}${q.question}${q.multiSelect ? ' (several allowed, separated by commas)' : ''}`);
      lines.push(...q.options.map((o, i) => `${i + 1}. ${o}`));
    });
    lines.push(
      '',
      approval.questions.length > 1
        ? 'Reply with one answer per line, in order (an option number or its text), or **deny** *reason*.'
        : 'Reply with an option number or its text, or **deny** *reason*.',
    );
    return lines.join('\n');
  }
  const verb = approval.tool === 'Bash' ? 'wants to run' : 'wants to use';
  return [
    `🔐 **${approval.session}** ${verb} ${truncate(approval.summary, SUMMARY_CHARS)} (approval ${approval.id})`,
    '',
    'Reply with one of:',
    '- **allow**: this call only',
    '- **allow for session**: this and calls like it for the rest of the session',
    '- **always**: store a rule for this workspace',
    '- **deny** *reason*: refuse; the agent gets your reason',
  ].join('\n');
}

/** The outcome as one line: `✅ k3x9q [eng-1-worker-1] Bash: npm test — allowed for this session by linear|Ada`. */
export function approvalOutcome(approval: Approval): string {
  return approvalLine(approval);
}

/** Who decided from Linear, as `Approval.decidedBy` names it: `linear|<name>` (the user id when the name is unknown). */
export function linearDecider(author: { id: string; name: string | null } | null): string {
  return `linear|${author?.name?.trim() || author?.id || 'unknown'}`;
}
