// Shell commands as permission rules see them: a Bash tool call's command split into the simple commands that run
// (at `&&`, `||`, `;`, `|`, `&`, newlines, outside quotes), each marked `risky` when it can do more than its words
// say (command or process substitution, `${…}` expansion, a subshell, a redirection that writes a file). A command
// that cannot be split with confidence (an unterminated quote, a here-document, too long) is `opaque`. Pure; the work
// is one pass over at most MAX_COMMAND characters.

/** Longer commands are not split (they are `opaque`): only an exact rule can match them. */
export const MAX_COMMAND = 10_000;

/** One simple command: its raw text (trimmed), its first words (quotes removed) and whether it is risky. */
export interface CommandPart {
  text: string;
  /** The words before the first redirection or expansion, unquoted; `plain[i]` says word i had no quoting at all. */
  words: string[];
  plain: boolean[];
  risky: boolean;
}

/** A command split into its simple commands, or `opaque` with the reason it could not be split. */
export type CommandShape = { kind: 'parts'; parts: CommandPart[] } | { kind: 'opaque'; reason: string };

type Quote = 'none' | 'single' | 'double' | 'ansi';

/** Splits `command` into simple commands (see the file comment). Expects any string; never throws. */
export function splitCommand(command: string): CommandShape {
  if (command.length > MAX_COMMAND) return { kind: 'opaque', reason: 'too long' };
  const parts: CommandPart[] = [];
  let quote: Quote = 'none';
  let start = 0;
  let risky = false;
  let words: string[] = [];
  let plain: boolean[] = [];
  let word = '';
  let wordStarted = false;
  let wordPlain = true;
  let wordsClosed = false; // after a redirection or expansion, later words are not collected
  const endWord = (): void => {
    if (wordStarted && !wordsClosed) {
      words.push(word);
      plain.push(wordPlain);
    }
    word = '';
    wordStarted = false;
    wordPlain = true;
  };
  const endPart = (end: number): void => {
    endWord();
    const text = command.slice(start, end).trim();
    if (text.length > 0) parts.push({ text, words, plain, risky });
    words = [];
    plain = [];
    risky = false;
    wordsClosed = false;
  };
  const dropFd = (): void => {
    if (wordPlain && /^\d+$/.test(word)) wordStarted = false; // the fd number of `2>`
  };
  const add = (c: string, quoted: boolean): void => {
    word += c;
    wordStarted = true;
    if (quoted) wordPlain = false;
  };

  let i = 0;
  while (i < command.length) {
    const c = command[i] as string;
    const next = command[i + 1] ?? '';
    if (quote === 'single') {
      if (c === "'") quote = 'none';
      else add(c, true);
      i += 1;
      continue;
    }
    if (quote === 'ansi') {
      if (c === '\\') {
        add(next, true);
        i += 2;
      } else {
        if (c === "'") quote = 'none';
        else add(c, true);
        i += 1;
      }
      continue;
    }
    if (c === '`' || (c === '$' && (next === '(' || next === '{'))) {
      risky = true;
      wordsClosed = true;
      add(c, quote === 'double');
      i += 1;
      continue;
    }
    if (quote === 'double') {
      if (c === '"') quote = 'none';
      else if (c === '\\' && next === '\n') i += 1;
      else if (c === '\\' && '"\\$`'.includes(next) && next !== '') {
        add(next, true);
        i += 1;
      } else add(c, true);
      i += 1;
      continue;
    }
    // Unquoted.
    if (c === '\\') {
      if (next === '\n') {
        endWord();
      } else if (next !== '') add(next, true);
      i += 2;
      continue;
    }
    if (c === "'") {
      quote = 'single';
      wordStarted = true;
      wordPlain = false;
      i += 1;
      continue;
    }
    if (c === '$' && next === "'") {
      quote = 'ansi';
      wordStarted = true;
      wordPlain = false;
      i += 2;
      continue;
    }
    if (c === '"') {
      quote = 'double';
      wordStarted = true;
      wordPlain = false;
      i += 1;
      continue;
    }
    if (c === '#' && !wordStarted) {
      while (i < command.length && command[i] !== '\n') i += 1;
      continue;
    }
    if (c === ';' || c === '\n' || c === '\r' || c === '|' || (c === '&' && next !== '>')) {
      endPart(i);
      i += c === next || (c === '|' && next === '&') ? 2 : 1;
      if (c === ';' && command[i] === ';') i += 1; // `;;` only appears in case statements: split there too
      start = i;
      continue;
    }
    if (c === '(' || c === ')') {
      risky = true; // a subshell, a function body or a process substitution
      wordsClosed = true;
      endWord();
      i += 1;
      continue;
    }
    if (c === '<') {
      if (next === '<' && command[i + 2] !== '<') return { kind: 'opaque', reason: 'here-document' };
      dropFd();
      endWord();
      wordsClosed = true;
      i += next === '<' ? 3 : 1;
      continue;
    }
    if (c === '>' || (c === '&' && next === '>')) {
      dropFd();
      endWord();
      wordsClosed = true;
      const target = redirectTarget(command, i);
      if (!target.harmless) risky = true;
      i = target.end;
      continue;
    }
    if (c === ' ' || c === '\t') {
      endWord();
      i += 1;
      continue;
    }
    add(c, false);
    i += 1;
  }
  if (quote !== 'none') return { kind: 'opaque', reason: 'unterminated quote' };
  endPart(command.length);
  return { kind: 'parts', parts };
}

/**
 * Reads the redirection operator at `at` (`>`, `>>`, `>|`, `&>`, `&>>`, `>&`) and its target. Harmless: duplicating
 * or closing a file descriptor (`>&2`, `2>&1`, `>&-`) and writing to /dev/null. Returns where scanning continues.
 */
function redirectTarget(command: string, at: number): { harmless: boolean; end: number } {
  let i = at;
  if (command[i] === '&') i += 1;
  i += 1; // the `>`
  if (command[i] === '>' || command[i] === '|') i += 1;
  if (command[i] === '&') {
    const dup = /^(\d+|-)(?=$|[\s;&|<>()])/.exec(command.slice(i + 1, i + 12));
    if (dup) return { harmless: true, end: i + 1 + (dup[1] as string).length };
    return { harmless: false, end: i + 1 };
  }
  while (command[i] === ' ' || command[i] === '\t') i += 1;
  const target = /^\/dev\/null(?=$|[\s;&|<>()])/.exec(command.slice(i, i + 12));
  if (target) return { harmless: true, end: i + target[0].length };
  return { harmless: false, end: i }; // the target word is read as an ordinary (uncollected) word
}
