// Splitting a long message into parts a connector accepts: on paragraph, then line, then word boundaries, and never
// leaving a code fence broken (a part that ends inside a fence closes it; the next part reopens it with the same info).

const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})(.*)$/;

interface OpenFence {
  /** The fence characters that opened it, e.g. ``` or ~~~~. */
  marker: string;
  /** The whole opening line, e.g. ```ts, used to reopen the fence in the next part. */
  opener: string;
}

/** Returns the fence still open at the end of `text`, given the one open at its start (null: none). */
function fenceAfter(text: string, open: OpenFence | null): OpenFence | null {
  let fence = open;
  for (const line of text.split('\n')) {
    const match = FENCE_LINE.exec(line);
    if (!match) continue;
    const marker = match[1] ?? '';
    const info = match[2] ?? '';
    if (fence === null) {
      if (marker.startsWith('`') && info.includes('`')) continue;
      fence = { marker, opener: line.trim() };
    } else if (marker[0] === fence.marker[0] && marker.length >= fence.marker.length && info.trim() === '') {
      fence = null;
    }
  }
  return fence;
}

interface Cut {
  /** The part is `rest.slice(0, end)`. */
  end: number;
  /** The remainder starts at `rest.slice(next)` (the separator is dropped). */
  next: number;
}

function lastWhitespace(text: string, from: number): number {
  for (let i = Math.min(from, text.length - 1); i > 0; i -= 1) {
    const c = text[i];
    if (c === ' ' || c === '\t') return i;
  }
  return -1;
}

/** Chooses where to cut `rest` so the part holds at most `budget` characters. */
function chooseCut(rest: string, budget: number): Cut {
  const half = Math.floor(budget / 2);
  const candidates: ((min: number) => Cut | null)[] = [
    (min) => {
      const i = rest.lastIndexOf('\n\n', budget);
      if (i < min || i <= 0) return null;
      let next = i;
      while (rest[next] === '\n') next += 1;
      return { end: i, next };
    },
    (min) => {
      const i = rest.lastIndexOf('\n', budget);
      return i < min || i <= 0 ? null : { end: i, next: i + 1 };
    },
    (min) => {
      const i = lastWhitespace(rest, budget);
      return i < min || i <= 0 ? null : { end: i, next: i + 1 };
    },
  ];
  // A boundary in the second half of the window first (so parts are not tiny), then any boundary at all.
  for (const min of [half, 1]) {
    for (const candidate of candidates) {
      const cut = candidate(min);
      if (cut) return cut;
    }
  }
  let end = budget;
  const code = rest.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff && end > 1) end -= 1;
  return { end, next: end };
}

/**
 * Splits `text` into parts of at most `limit` UTF-16 code units, preferring paragraph, then line, then word boundaries.
 * A part that would end inside a fenced code block is closed with the fence marker and the next part reopens it with the
 * same opening line (language kept). Returns `[text]` when it already fits; never returns empty parts for non-empty text.
 */
export function splitMessage(text: string, limit: number): string[] {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
  if (text.length <= limit) return [text];
  const parts: string[] = [];
  let rest = text;
  let fence: OpenFence | null = null;
  while (rest.length > 0) {
    let prefix: string = fence ? `${fence.opener}\n` : '';
    // A fence opener too long to repeat within the limit: give up keeping that fence intact.
    if (fence && limit - prefix.length - fence.marker.length - 1 < Math.max(1, Math.floor(limit / 4))) {
      fence = null;
      prefix = '';
    }
    if (prefix.length + rest.length <= limit) {
      parts.push(prefix + rest);
      break;
    }
    let budget = limit - prefix.length;
    for (;;) {
      const cut = chooseCut(rest, budget);
      const head = rest.slice(0, cut.end);
      const open = fenceAfter(head, fence);
      const closing = open ? `\n${open.marker}` : '';
      const fits: boolean = prefix.length + head.length + closing.length <= limit;
      if (fits || budget <= 1) {
        parts.push(prefix + head + (fits ? closing : ''));
        rest = rest.slice(cut.next);
        fence = fits ? open : null;
        break;
      }
      budget = Math.max(1, Math.min(budget - 1, limit - prefix.length - closing.length));
    }
  }
  return parts;
}
