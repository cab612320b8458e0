// The daemon's markdown-ish text (model answers, notification templates) as Discord markdown. Discord renders
// CommonMark-like markdown itself (fenced code, `code`, **bold**, *italic*, > quotes, lists, # to ### headings), so the
// text passes through; only headings Discord does not render (#### and deeper) become bold lines. Code is left alone.

const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})/;
const DEEP_HEADING = /^ {0,3}#{4,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$/;

/** Converts `text` for Discord (same length or shorter, so it stays within the limit it was split to). */
export function toDiscordMarkdown(text: string): string {
  let fence: string | null = null;
  return text
    .split('\n')
    .map((line) => {
      const open = FENCE_LINE.exec(line);
      if (open) {
        const marker = open[1] as string;
        if (fence === null) fence = marker;
        else if (marker[0] === fence[0] && marker.length >= fence.length) fence = null;
        return line;
      }
      if (fence !== null) return line;
      const heading = DEEP_HEADING.exec(line);
      return heading ? `**${heading[1] as string}**` : line;
    })
    .join('\n');
}
