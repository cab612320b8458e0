// Path patterns of Read/Edit rules, read the gitignore way: `*` and `?` stay inside one path segment, `**` as a
// whole segment spans any number of them (a trailing `/**` at least one), `[a-z]` / `[!a]` are character classes
// and `\` escapes. A pattern without a slash, or with only a trailing one (`*.env`, `node_modules/`), matches at any
// depth; a trailing slash means "a directory", so it matches only what lies below one. As in gitignore, a pattern
// that matches a directory covers everything in it (`Edit(src)` covers `src/a.ts`). Where a pattern is rooted: `//x`
// at the filesystem root, `~/x` in the home directory, `/x`, `./x` and `x` in the call's working directory. Paths
// are compared lexically after resolving `.` and `..` (symlinks are not followed). Matching is a two-level greedy
// wildcard match: O(pattern × path) steps.

import { posix } from 'node:path';

/** Longest file path and pattern compared; longer ones never match. */
const MAX_PATH = 4096;

/**
 * Whether `pattern` (a Read/Edit rule's specifier) matches `filePath` (absolute, `~/…`, or relative to `cwd`).
 * A trailing `/**` needs something below (`src/**` does not match `src`) unless `searched` says the path is a
 * directory a search reads the contents of. Expects `cwd` and `home` absolute; returns false when either is not, or
 * a path is too long.
 */
export function pathPatternMatches(
  pattern: string,
  filePath: string,
  cwd: string,
  home: string,
  searched = false,
): boolean {
  if (!posix.isAbsolute(cwd) || !posix.isAbsolute(home)) return false;
  if (pattern.length > MAX_PATH || filePath.length > MAX_PATH || filePath.length === 0) return false;
  const target = resolvePath(filePath, cwd, home);
  const absolute = absolutePattern(pattern, cwd, home);
  const segments = splitSegments(absolute.pattern);
  if (segments.at(-1) === '**' && !searched) segments.splice(-1, 1, '*', '**');
  // "This path or a directory above it": a trailing `**` spans zero or more segments; after a directory-only
  // pattern at least one more segment must follow.
  const full = absolute.directoryOnly ? [...segments, '*', '**'] : [...segments, '**'];
  return matchSegments(
    full.map((segment) => (segment === '**' ? GLOBSTAR : tokenize(segment))),
    splitSegments(target),
  );
}

/** The call's path made absolute: `~/x` in `home`, a relative path in `cwd`, `.` and `..` resolved. */
function resolvePath(filePath: string, cwd: string, home: string): string {
  if (filePath === '~' || filePath.startsWith('~/')) return posix.resolve(home, `.${filePath.slice(1)}`);
  return posix.resolve(cwd, filePath);
}

/** The pattern made absolute (rooted as the file comment says), and whether it named a directory only. */
function absolutePattern(pattern: string, cwd: string, home: string): { pattern: string; directoryOnly: boolean } {
  let root: string;
  let rest: string;
  let anchored = true;
  if (pattern.startsWith('//')) [root, rest] = ['/', pattern.slice(2)];
  else if (pattern === '~' || pattern.startsWith('~/')) [root, rest] = [home, pattern.slice(2)];
  else if (pattern.startsWith('/')) [root, rest] = [cwd, pattern.slice(1)];
  else if (pattern.startsWith('./')) [root, rest] = [cwd, pattern.slice(2)];
  else [root, rest, anchored] = [cwd, pattern, false];
  const directoryOnly = rest.endsWith('/');
  if (directoryOnly) rest = rest.replace(/\/+$/, '');
  if (!anchored && !rest.includes('/')) rest = `**/${rest}`;
  return { pattern: posix.normalize(`${root}/${rest}`), directoryOnly };
}

function splitSegments(path: string): string[] {
  return path.split('/').filter((segment) => segment.length > 0);
}

const GLOBSTAR = 'globstar';

/** Greedy wildcard match over segments, `**` playing the star: linear backtracking to the last `**` only. */
function matchSegments(pattern: (Token[] | typeof GLOBSTAR)[], path: string[]): boolean {
  let p = 0;
  let s = 0;
  let starP = -1;
  let starS = 0;
  while (s < path.length) {
    const segment = pattern[p];
    if (segment === GLOBSTAR) {
      starP = p;
      starS = s;
      p += 1;
    } else if (segment !== undefined && matchSegment(segment, path[s] as string)) {
      p += 1;
      s += 1;
    } else if (starP >= 0) {
      p = starP + 1;
      starS += 1;
      s = starS;
    } else return false;
  }
  while (pattern[p] === GLOBSTAR) p += 1;
  return p === pattern.length;
}

type Token = { kind: 'star' } | { kind: 'one' } | { kind: 'char'; char: string } | { kind: 'class'; test: string };

/** One segment against one tokenized segment pattern (`*`, `?`, `[…]`, `\x`, literal characters). */
function matchSegment(tokens: Token[], segment: string): boolean {
  let t = 0;
  let s = 0;
  let starT = -1;
  let starS = 0;
  while (s < segment.length) {
    const token = tokens[t];
    if (token?.kind === 'star') {
      starT = t;
      starS = s;
      t += 1;
    } else if (token !== undefined && tokenMatches(token, segment[s] as string)) {
      t += 1;
      s += 1;
    } else if (starT >= 0) {
      t = starT + 1;
      starS += 1;
      s = starS;
    } else return false;
  }
  while (tokens[t]?.kind === 'star') t += 1;
  return t === tokens.length;
}

function tokenMatches(token: Exclude<Token, { kind: 'star' }>, char: string): boolean {
  switch (token.kind) {
    case 'one':
      return true;
    case 'char':
      return token.char === char;
    case 'class':
      return classMatches(token.test, char);
  }
}

function tokenize(pattern: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i] as string;
    if (c === '*') {
      if (tokens.at(-1)?.kind !== 'star') tokens.push({ kind: 'star' });
      i += 1;
    } else if (c === '?') {
      tokens.push({ kind: 'one' });
      i += 1;
    } else if (c === '\\' && i + 1 < pattern.length) {
      tokens.push({ kind: 'char', char: pattern[i + 1] as string });
      i += 2;
    } else if (c === '[') {
      const close = pattern.indexOf(']', i + 2);
      if (close < 0) {
        tokens.push({ kind: 'char', char: c });
        i += 1;
      } else {
        tokens.push({ kind: 'class', test: pattern.slice(i + 1, close) });
        i = close + 1;
      }
    } else {
      tokens.push({ kind: 'char', char: c });
      i += 1;
    }
  }
  return tokens;
}

/** `body` is what stands between `[` and `]`: an optional `!` or `^`, then characters and `a-z` ranges. */
function classMatches(body: string, char: string): boolean {
  const negated = body.startsWith('!') || body.startsWith('^');
  const set = negated ? body.slice(1) : body;
  let found = false;
  for (let i = 0; i < set.length; i += 1) {
    const low = set[i] as string;
    if (set[i + 1] === '-' && i + 2 < set.length) {
      const high = set[i + 2] as string;
      if (char >= low && char <= high) found = true;
      i += 2;
    } else if (low === char) found = true;
  }
  return found !== negated;
}
