// Markdown-ish text (model answers, notification templates) → Telegram MarkdownV2. Fenced code blocks, inline code spans,
// **bold** and ATX headings (rendered bold) are kept when well-formed; every other character Telegram reserves is escaped,
// so the result always parses. Rules: https://core.telegram.org/bots/api#markdownv2-style

const RESERVED = /[_*[\]()~`>#+\-=|{}.!\\]/g;
const CODE_RESERVED = /[`\\]/g;
const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const HEADING = /^ {0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$/;
const SAFE_LANGUAGE = /^[A-Za-z0-9_+-]{1,32}$/;

/** Escapes `text` so MarkdownV2 shows it literally (outside any entity). */
export function escapeMarkdownV2(text: string): string {
  return text.replace(RESERVED, '\\$&');
}

/** Escapes the content of a code span or a pre block (only ` and \ need it there). */
export function escapeMarkdownV2Code(text: string): string {
  return text.replace(CODE_RESERVED, '\\$&');
}

/** Converts one line outside code blocks: code spans and **bold** kept, the rest escaped. */
function convertInline(line: string): string {
  let out = '';
  let i = 0;
  while (i < line.length) {
    const c = line[i];
    if (c === '`') {
      let run = 1;
      while (line[i + run] === '`') run += 1;
      const fence = '`'.repeat(run);
      let close = line.indexOf(fence, i + run);
      // The closing run must be exactly as long as the opening one.
      while (close !== -1 && line[close + run] === '`') {
        let end = close;
        while (line[end] === '`') end += 1;
        close = line.indexOf(fence, end);
      }
      const content = close === -1 ? '' : line.slice(i + run, close);
      if (close !== -1 && content.trim() !== '') {
        const inner = run > 1 && content.startsWith(' ') && content.endsWith(' ') ? content.slice(1, -1) : content;
        out += `\`${escapeMarkdownV2Code(inner)}\``;
        i = close + run;
        continue;
      }
      out += escapeMarkdownV2(fence);
      i += run;
      continue;
    }
    if (c === '*' && line[i + 1] === '*') {
      const close = line.indexOf('**', i + 2);
      const content = close === -1 ? '' : line.slice(i + 2, close);
      if (close !== -1 && content.trim() !== '' && !/^\s|\s$/.test(content) && line[close + 2] !== '*') {
        out += `*${escapeMarkdownV2(content)}*`;
        i = close + 2;
        continue;
      }
      out += '\\*\\*';
      i += 2;
      continue;
    }
    out += escapeMarkdownV2(c ?? '');
    i += 1;
  }
  return out;
}

/** Converts a run of lines outside code blocks. */
function convertText(lines: string[]): string[] {
  return lines.map((line) => {
    const heading = HEADING.exec(line);
    if (heading) {
      const title = (heading[1] ?? '').replace(/\*\*/g, '').trim();
      if (title) return `*${escapeMarkdownV2(title)}*`;
    }
    return convertInline(line);
  });
}

/** Index of the line closing the fence opened by `marker`, searching from `from`; -1 when it is never closed. */
function closingFence(lines: string[], from: number, marker: string): number {
  for (let j = from; j < lines.length; j += 1) {
    const match = FENCE_LINE.exec(lines[j] ?? '');
    const found = match?.[1] ?? '';
    if (match && found[0] === marker[0] && found.length >= marker.length && (match[2] ?? '').trim() === '') return j;
  }
  return -1;
}

/**
 * Returns `text` as MarkdownV2 that Telegram accepts and that shows the same words: closed fenced code blocks become pre
 * blocks (a simple language tag kept), `code` spans stay code, **bold** and # headings become bold, and every other
 * reserved character is escaped. Unclosed fences and stray markers are shown literally.
 */
export function toMarkdownV2(text: string): string {
  const lines = text.split('\n');
  const out: string[] = [];
  let plain: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] ?? '';
    const open = FENCE_LINE.exec(line);
    const marker = open?.[1] ?? '';
    const info = (open?.[2] ?? '').trim();
    const close = open && !(marker.startsWith('`') && info.includes('`')) ? closingFence(lines, i + 1, marker) : -1;
    const body = close === -1 ? [] : lines.slice(i + 1, close);
    if (close === -1 || body.join('\n').trim() === '') {
      plain.push(line);
      i += 1;
      continue;
    }
    out.push(...convertText(plain));
    plain = [];
    const language = info.split(/\s+/)[0] ?? '';
    const tag = SAFE_LANGUAGE.test(language) ? language : '';
    // The closing fence follows the code directly, so the pre entity holds exactly the code (no trailing newline).
    out.push(`\`\`\`${tag}\n${escapeMarkdownV2Code(body.join('\n'))}\`\`\``);
    i = close + 1;
  }
  out.push(...convertText(plain));
  return out.join('\n');
}
