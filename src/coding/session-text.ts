// How a coding session's own text reads: whether the agent's last words ask something, the preview shown with waiting
// and completion events, and the idle timeout as an end reason says it. Pure functions.
import { formatDuration } from './format.ts';
import type { OutputBuffer } from './output-buffer.ts';

const PREVIEW_BLOCKS = 5;
const PREVIEW_CHARS = 500;

/** True when the last non-empty line of `text` ends with a question mark. */
export function endsWithQuestion(text: string): boolean {
  const lines = text
    .trim()
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const last = lines[lines.length - 1] ?? '';
  return /\?[)"'*_`]*$/.test(last);
}

/** The preview of `output`: its last 5 blocks joined, trimmed, at most 500 chars (the tail, marked with "…"). */
export function outputPreview(output: OutputBuffer): string {
  const text = output
    .last(PREVIEW_BLOCKS)
    .map((b) => b.text)
    .join('\n')
    .trim();
  return text.length > PREVIEW_CHARS ? `…${text.slice(-PREVIEW_CHARS)}` : text;
}

/** The preview of a session waiting for a permission answer: `preview` followed by how to answer, trimmed. */
export function permissionPreview(preview: string): string {
  return `${preview}\n(permission requested: answer yes to allow, anything else to deny)`.trim();
}

/** The idle timeout as the end reason says it: whole minutes as "30 min", anything else (e.g. 0.2 min) as "12s". */
export function idleText(ms: number): string {
  const minutes = ms / 60_000;
  return Number.isInteger(minutes) ? `${minutes} min` : formatDuration(ms);
}
