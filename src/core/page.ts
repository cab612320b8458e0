// Pages of lists held in memory, newest first, with opaque cursors (see cursor.ts).
import type { CursorKey } from './cursor.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';

/** What a paged list asks for. */
export interface PageRequest {
  limit: number;
  cursor?: string | undefined;
}

/** One page of items and the cursor of the next page (null on the last page). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

function compareKeys(a: CursorKey, b: CursorKey): number {
  if (a[0] !== b[0]) return b[0] - a[0];
  if (a[1] === b[1]) return 0;
  return a[1] < b[1] ? 1 : -1;
}

/**
 * Pages a list held in memory, newest first by `key` (a time, then a tie-breaker): sorts it, skips to the item after
 * the cursor and takes `limit` items.
 */
export function pageOf<T>(items: readonly T[], request: PageRequest, key: (item: T) => CursorKey): Page<T> {
  const keyed = items.map((item) => ({ item, key: key(item) })).sort((a, b) => compareKeys(a.key, b.key));
  let start = 0;
  if (request.cursor !== undefined) {
    const after = decodeCursor(request.cursor);
    // Binary search for the first item sorted after the cursor's key.
    let lo = 0;
    let hi = keyed.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compareKeys((keyed[mid] as { key: CursorKey }).key, after) <= 0) lo = mid + 1;
      else hi = mid;
    }
    start = lo;
  }
  const slice = keyed.slice(start, start + request.limit);
  const last = slice.at(-1);
  const more = start + request.limit < keyed.length;
  return { items: slice.map((k) => k.item), nextCursor: more && last ? encodeCursor(last.key) : null };
}
