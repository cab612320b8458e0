// The specifier of a Bash rule and how it meets a command. Four forms, as Claude Code reads them:
//   `*`            every command (the same as a bare `Bash`);
//   `npm test:*`   a prefix at a word boundary: `npm test` itself or `npm test` followed by a space or tab;
//   `git * main`   a wildcard pattern: `*` is any run of characters; a single trailing ` *` may also match nothing
//                  (`ls *` matches `ls`); `\*` is a literal star and `\\` a backslash;
//   anything else  exactly that command (trimmed).
// A compound command matches an allow rule only when every simple command in it does (bash-command.ts splits it);
// a risky simple command (substitution, subshell, redirection to a file) matches only an exact rule, and a command
// that cannot be split only an exact rule for the whole. A deny rule matches when any simple command matches; it is
// best effort (a command hidden in `$(…)` or in a variable is not seen): allow rules are the boundary, and a command
// no allow rule matches is asked about.

import { splitCommand } from './bash-command.ts';

/** What a rule is used for: allow rules must match every part of a command, deny rules any part. */
export type RulePurpose = 'allow' | 'deny';

type BashPattern =
  | { kind: 'any' }
  | { kind: 'exact'; text: string }
  | { kind: 'prefix'; text: string }
  | { kind: 'wildcard'; chunks: string[]; optionalTail: string | null };

/** Whether the Bash rule specifier `specifier` matches `command` for `purpose`. Never throws. */
export function bashSpecifierMatches(specifier: string, command: string, purpose: RulePurpose): boolean {
  const pattern = parseBashPattern(specifier);
  const whole = command.trim();
  if (pattern.kind === 'any') return true;
  if (pattern.kind === 'exact' && whole === pattern.text) return true;
  const shape = splitCommand(command);
  if (shape.kind === 'opaque') return purpose === 'deny' && textMatches(pattern, whole);
  if (purpose === 'deny') return shape.parts.some((part) => textMatches(pattern, part.text));
  return (
    shape.parts.length > 0 &&
    shape.parts.every((part) => (part.risky ? pattern.kind === 'exact' : true) && textMatches(pattern, part.text))
  );
}

function textMatches(pattern: BashPattern, text: string): boolean {
  switch (pattern.kind) {
    case 'any':
      return true;
    case 'exact':
      return text === pattern.text;
    case 'prefix':
      return text === pattern.text || (text.startsWith(pattern.text) && /[ \t]/.test(text[pattern.text.length] ?? ''));
    case 'wildcard':
      return text === pattern.optionalTail || wildcardMatches(pattern.chunks, text);
  }
}

/** `chunks` are the literal pieces between the stars: first and last anchored, the middle ones found in order. */
function wildcardMatches(chunks: string[], text: string): boolean {
  const first = chunks[0] as string;
  const last = chunks.at(-1) as string;
  if (text.length < first.length + last.length || !text.startsWith(first) || !text.endsWith(last)) return false;
  let at = first.length;
  const end = text.length - last.length;
  for (const chunk of chunks.slice(1, -1)) {
    const found = text.indexOf(chunk, at);
    if (found < 0 || found + chunk.length > end) return false;
    at = found + chunk.length;
  }
  return true;
}

function parseBashPattern(specifier: string): BashPattern {
  const text = specifier.trim();
  if (text === '*') return { kind: 'any' };
  if (!text.includes('*')) return { kind: 'exact', text };
  const stars = unescapedStars(text);
  if (stars.length === 1 && stars[0] === text.length - 1 && text.endsWith(':*')) {
    return { kind: 'prefix', text: unescapeStars(text.slice(0, -2)) };
  }
  if (stars.length === 0) return { kind: 'exact', text: unescapeStars(text) };
  const chunks: string[] = [];
  let from = 0;
  for (const star of stars) {
    chunks.push(unescapeStars(text.slice(from, star)));
    from = star + 1;
  }
  chunks.push(unescapeStars(text.slice(from)));
  const optionalTail = stars.length === 1 && text.endsWith(' *') ? (chunks[0] as string).trimEnd() : null;
  return { kind: 'wildcard', chunks, optionalTail };
}

/** Positions of the `*` not escaped by a backslash. */
function unescapedStars(text: string): number[] {
  const stars: number[] = [];
  for (let i = 0; i < text.length; i += 1) {
    if (text[i] === '\\') i += 1;
    else if (text[i] === '*') stars.push(i);
  }
  return stars;
}

function unescapeStars(text: string): string {
  return text.replace(/\\([\\*])/g, '$1');
}

/** An exact-command specifier for `command`: stars and backslashes escaped when it holds a star. */
export function exactSpecifier(command: string): string {
  const text = command.trim();
  return text.includes('*') ? text.replace(/[\\*]/g, '\\$&') : text;
}

/**
 * Programs whose first word says little: they run other commands or code (`sudo x`, `xargs x`, `find -exec`,
 * `sed e`). "Allow for session" on them stores the exact command, never a prefix.
 */
const RUNNERS = new Set(
  names(
    'sudo doas su env xargs nohup time timeout nice ionice exec eval command builtin source . watch strace ltrace ' +
      'chroot ssh find awk gawk sed parallel nsenter unshare setsid script stdbuf flock sg runuser',
  ),
);

/** Programs with subcommands, and how many words name one (`gh pr list` → 2). */
const SUBCOMMANDS: ReadonlyMap<string, number> = new Map([
  ...names(
    'git npm pnpm yarn npx bunx bun deno cargo rustup go docker podman kubectl helm make pip pip3 uv poetry pipenv ' +
      'conda gem bundle mvn gradle dotnet terraform brew apt apt-get systemctl',
  ).map((name) => [name, 1] as const),
  ...names('gh aws gcloud az').map((name) => [name, 2] as const),
  // Interpreters: the script is part of the rule (`python x.py` → `python x.py:*`); `python -m mod` is handled below.
  ...names('python python3 node ruby perl php bash sh zsh tsx').map((name) => [name, 1] as const),
]);

/** Subcommands that name one more word: `npm run build`, `docker compose up`, `uv run pytest`. */
const NESTED = new Set(['run', 'exec', 'x', 'dlx', 'compose']);

function names(list: string): string[] {
  return list.split(' ');
}

const PLAIN_WORD = /^[A-Za-z0-9_./@+:%,-]+$/;

/**
 * The specifier "Allow for session" stores for `command`: the program and its subcommand (see SUBCOMMANDS) as a
 * `:*` prefix (`npm test --watch` → `npm test:*`), or the exact command when it is compound, risky, starts with an
 * assignment or a runner, or its words are quoted or flags where a subcommand belongs.
 */
export function sessionBashSpecifier(command: string): string {
  const exact = exactSpecifier(command);
  const shape = splitCommand(command);
  if (shape.kind === 'opaque' || shape.parts.length !== 1) return exact;
  const part = shape.parts[0];
  if (part === undefined || part.risky) return exact;
  const { words, plain } = part;
  const program = words[0];
  if (program === undefined || RUNNERS.has(program)) return exact;
  const module = (program === 'python' || program === 'python3') && words[1] === '-m';
  let count = 1 + (SUBCOMMANDS.get(program) ?? 0);
  if (module || (count === 2 && NESTED.has(words[1] ?? ''))) count = 3;
  const taken = words.slice(0, count);
  const usable = taken.every(
    (word, i) => plain[i] === true && PLAIN_WORD.test(word) && (!word.startsWith('-') || (module && i === 1)),
  );
  if (taken.length < count || !usable || program.includes('=')) return exact;
  const prefix = `${taken.join(' ')}:*`;
  return bashSpecifierMatches(prefix, command, 'allow') ? prefix : exact;
}
