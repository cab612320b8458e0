// The texts of the review loop and mentions: the rework prompt (each comment as `path:line — body`, then the review's
// body), the mention's prompt, and the answers posted back (each carrying a hidden key, so a repeat finds it).
import type { ReviewComment } from './rework-api.ts';

const OUTPUT_MAX = 6000;

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** The prompt of a rework turn: the reviewer, each comment as `path:line — body`, then the review's body. */
export function reworkPrompt(input: {
  pull: number;
  author: string | null;
  reviewBody: string;
  comments: readonly ReviewComment[];
}): string {
  const lines = [`A reviewer (${input.author ?? 'unknown'}) asked for changes on pull request #${input.pull}.`];
  if (input.comments.length > 0) {
    lines.push('', 'Comments:');
    for (const c of input.comments) {
      const where = c.path ? `${c.path}${c.line === null ? '' : `:${c.line}`}` : '(general)';
      lines.push(`- ${where} — ${c.body.trim()}`);
    }
  }
  if (input.reviewBody.trim()) lines.push('', 'Review:', input.reviewBody.trim());
  lines.push('', 'Make the requested changes in this working directory, then say briefly what you changed.');
  return lines.join('\n');
}

/** Whether `body` mentions `@name` (as a whole word, any case). */
export function mentions(body: string, name: string): boolean {
  return mentionPattern(name).test(body);
}

function mentionPattern(name: string): RegExp {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^\\w@])@${escaped}(?![\\w-])`, 'i');
}

/** The prompt of a mention: the comment without the mention, then the issue's (or PR's) title and body. */
export function mentionPrompt(input: {
  name: string;
  repo: string;
  issue: number;
  onPull: boolean;
  title: string;
  issueBody: string;
  comment: string;
}): string {
  const asked = input.comment.replace(new RegExp(mentionPattern(input.name).source, 'gi'), '$1').trim();
  const what = input.onPull ? 'pull request' : 'issue';
  const lines = [asked || 'Take a look.', '', `(Asked on ${input.repo} ${what} #${input.issue}: ${input.title})`];
  if (input.issueBody.trim()) lines.push('', cut(input.issueBody.trim(), OUTPUT_MAX));
  return lines.join('\n');
}

/** The hidden line that marks switchboard's answer to `key` (looked up before answering again). */
export function answerMarker(key: string): string {
  return `<!-- switchboard:${key} -->`;
}

function quoted(output: string): string {
  const text = cut(output.trim(), OUTPUT_MAX);
  return text ? text : '(no output)';
}

/** The answer to a rework: what the agent said last and what was pushed. */
export function reworkAnswer(input: {
  key: string;
  session: string;
  lastOutput: string;
  branch: string;
  commit: string;
  committed: string | null;
}): string {
  const pushed =
    input.committed === null
      ? `Nothing new to commit; \`${input.branch}\` is at ${input.commit}.`
      : `Pushed ${input.commit} to \`${input.branch}\`: ${input.committed}`;
  return [
    answerMarker(input.key),
    `🔁 Rework by session **${input.session}**`,
    '',
    quoted(input.lastOutput),
    '',
    pushed,
  ].join('\n');
}

/** The answer to a mention: what the agent said last and what it cost (or why it did not run). */
export function mentionAnswer(
  input:
    | { key: string; session: string; lastOutput: string; costUsd: number; status: string }
    | { key: string; error: string },
): string {
  if ('error' in input) return [answerMarker(input.key), `⚠️ ${input.error}`].join('\n');
  return [
    answerMarker(input.key),
    `🤖 Session **${input.session}** ${input.status} · $${input.costUsd.toFixed(2)}`,
    '',
    quoted(input.lastOutput),
  ].join('\n');
}
