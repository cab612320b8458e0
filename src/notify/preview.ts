// Previews of a session's output for chat: the tail (what the agent said last), without Markdown decorations.

/** How far back from a cut a tail may look for a word boundary to start at. */
const WORD_SLACK = 20;

/**
 * The end of `text` (trimmed), at most `max` characters. A cut start is marked with "…" and moved forward to the next
 * word boundary when one is close, so the tail does not begin mid-word. Returns '' for blank text.
 */
export function tailText(text: string, max: number): string {
  const trimmed = text.trim();
  if (trimmed.length <= max) return trimmed;
  const start = trimmed.length - (max - 1);
  let cut = trimmed.slice(start);
  const midWord = /\S/.test(trimmed[start - 1] ?? ' ') && /^\S/.test(cut);
  const boundary = cut.search(/\s/);
  if (midWord && boundary > 0 && boundary < WORD_SLACK) cut = cut.slice(boundary);
  return `…${cut.trimStart()}`;
}

/**
 * Removes Markdown decorations so a preview reads as plain text: code fences, inline backticks, headings, quote
 * markers, bold/italic/strike markers (`*`, `~`, and `_` at word edges, so snake_case survives); links become
 * "text (url)". Blank-line runs collapse to one blank line.
 */
export function stripMarkdown(text: string): string {
  return text
    .replace(/^[ \t]*(```|~~~)[^\n]*$/gm, '')
    .replace(/`+/g, '')
    .replace(/^[ \t]*#{1,6}[ \t]+/gm, '')
    .replace(/^[ \t]*>[ \t]?/gm, '')
    .replace(/!?\[([^\]\n]+)\]\(([^)\s]+)\)/g, '$1 ($2)')
    .replace(/^([ \t]*)[*+][ \t]+/gm, '$1- ')
    .replace(/[*~]+/g, '')
    .replace(/(^|[^\p{L}\p{N}])_+|_+(?=[^\p{L}\p{N}]|$)/gmu, '$1')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** The preview of output for chat: Markdown stripped, then the last `max` characters. */
export function outputPreview(text: string, max: number): string {
  return tailText(stripMarkdown(text), max);
}
