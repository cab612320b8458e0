// Dotted config paths (`gateway.port`) named by outside input: `--set` flags and `SWITCHBOARD_*` variables. Segments
// that would reach an object's prototype are refused, and every lookup is an own-property lookup.
import { invalidInput } from './errors.ts';

/** Path segments that name an object's prototype machinery rather than a config key. */
const UNSAFE_SEGMENTS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Splits a dotted path into its segments. Throws an invalid_input error naming the path and `source` (the flag or
 * variable it came from) when a segment is empty or is `__proto__`, `constructor` or `prototype`.
 */
export function pathSegments(path: string, source: string): string[] {
  const parts = path.split('.');
  for (const part of parts) {
    if (part === '') throw invalidInput(`${source}: config key "${path}" has an empty segment`, path);
    if (UNSAFE_SEGMENTS.has(part))
      throw invalidInput(`${source}: config key "${path}" may not contain "${part}"`, path);
  }
  return parts;
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Sets `value` at the dotted `path` inside `target`, replacing anything that is not an object on the way with a new
 * object. Only own properties are followed; unsafe segments are refused (see `pathSegments`).
 */
export function setPath(target: Record<string, unknown>, path: string, value: unknown, source: string): void {
  const parts = pathSegments(path, source);
  const last = parts.pop() as string;
  let node = target;
  for (const part of parts) {
    const next = Object.hasOwn(node, part) ? node[part] : undefined;
    if (isPlainRecord(next)) {
      node = next;
    } else {
      const created: Record<string, unknown> = {};
      node[part] = created;
      node = created;
    }
  }
  node[last] = value;
}

/** The source of the longest path in `sources` that is `path` itself or one of its ancestors; undefined when none. */
export function sourceOf(sources: ReadonlyMap<string, string>, path: string): string | undefined {
  const parts = path.split('.');
  for (let n = parts.length; n > 0; n -= 1) {
    const found = sources.get(parts.slice(0, n).join('.'));
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The sources of every path in `sources` at `path` or below it (an unknown key set through a deeper path). */
export function sourcesUnder(sources: ReadonlyMap<string, string>, path: string): string[] {
  return [...sources].filter(([key]) => key === path || key.startsWith(`${path}.`)).map(([, source]) => source);
}
