// The line the CLI prints under a page of a list that has more: the same command with `--cursor <next>`.

function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * For a result with a `nextCursor`, the command that prints the next page: `switchboard <command> <words…> --cursor
 * <next>` (`words`: the arguments and options this invocation was given, without its own --cursor). Null otherwise.
 */
export function nextPageHint(command: string, words: readonly string[], result: unknown): string | null {
  if (typeof result !== 'object' || result === null) return null;
  const next = (result as { nextCursor?: unknown }).nextCursor;
  if (typeof next !== 'string' || next.length === 0) return null;
  return `next page: switchboard ${[command, ...words, '--cursor', next].map(shellWord).join(' ')}`;
}
