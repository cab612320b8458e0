const STOPWORDS = new Set(
  'a an and are as at be but by can could do does for from has have how i if in into is it its just let me my no not of on or our please should so some that the their them then there these this those to up us was we what when where which who why will with would you your'.split(
    ' ',
  ),
);

/** Derives a short kebab-case name from a prompt: its first three meaningful words ("session" when none). */
export function nameFromPrompt(prompt: string): string {
  const words = prompt
    .replace(/\[\[[^\]]*\]\]/g, ' ')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0 && !STOPWORDS.has(w));
  const picked = words.slice(0, 3).map((w) => w.slice(0, 20));
  return picked.length > 0 ? picked.join('-') : 'session';
}

/** Resolves with `base`, or `base-2`, `base-3`, … — the first that `taken` says is free. */
export async function uniqueName(base: string, taken: (name: string) => Promise<boolean>): Promise<string> {
  if (!(await taken(base))) return base;
  for (let n = 2; ; n += 1) {
    const candidate = `${base}-${n}`;
    if (!(await taken(candidate))) return candidate;
  }
}

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** True when `name` is usable as a session name (letters, digits, . _ -; at most 64 chars). */
export function isValidName(name: string): boolean {
  return NAME_RE.test(name);
}
