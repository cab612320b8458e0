// The commit a working directory is at, read from the repository's files rather than by running git: a launch records
// it as the session's diff base, and a burst of launches must not spawn a git process each (a spawn costs the event
// loop milliseconds). Layouts this does not read (reftable, a ref it cannot find) fall back to `git rev-parse`.
import { readFile, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { headCommit } from './git-run.ts';

const OBJECT_ID = /^[0-9a-f]{40}$|^[0-9a-f]{64}$/;

async function readText(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return null;
  }
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** The repository's git directory for `workdir` (walking up), or null outside any repository. */
async function gitDirOf(workdir: string): Promise<string | null> {
  for (let dir = resolve(workdir); ; dir = dirname(dir)) {
    const dotGit = join(dir, '.git');
    if (await isDirectory(dotGit)) return dotGit;
    // A worktree or submodule: `.git` is a file naming the real git directory.
    const pointer = (await readText(dotGit))?.match(/^gitdir: (.+)$/m)?.[1]?.trim();
    if (pointer) return isAbsolute(pointer) ? pointer : resolve(dir, pointer);
    if (dirname(dir) === dir) return null;
  }
}

/** The id a ref names: its loose file, else its line in packed-refs; null when neither has it. */
async function refId(gitDir: string, commonDir: string, ref: string): Promise<string | null> {
  for (const base of [gitDir, commonDir]) {
    const loose = (await readText(join(base, ref)))?.trim();
    if (loose && OBJECT_ID.test(loose)) return loose;
  }
  const packed = await readText(join(commonDir, 'packed-refs'));
  for (const line of packed?.split('\n') ?? []) {
    const [id, name] = line.trim().split(' ');
    if (name === ref && id && OBJECT_ID.test(id)) return id;
  }
  return null;
}

/**
 * The commit `workdir` is at (HEAD), or null when it is not inside a git repository or its branch has no commit yet.
 * Reads `.git/HEAD` and the ref it names; anything unusual is asked of git itself.
 */
export async function workdirHead(workdir: string): Promise<string | null> {
  const gitDir = await gitDirOf(workdir);
  if (!gitDir) return null;
  const commonPointer = (await readText(join(gitDir, 'commondir')))?.trim();
  const commonDir = commonPointer ? resolve(gitDir, commonPointer) : gitDir;
  const head = (await readText(join(gitDir, 'HEAD')))?.trim();
  if (head && OBJECT_ID.test(head)) return head;
  const ref = head?.match(/^ref: (refs\/\S+)$/)?.[1];
  const reftable = await isDirectory(join(commonDir, 'reftable'));
  if (ref && !reftable && !ref.includes('..')) {
    const id = await refId(gitDir, commonDir, ref);
    if (id) return id;
    // An unborn branch (no commit yet) has neither a loose nor a packed ref.
    if (!(await readText(join(commonDir, 'packed-refs')))?.includes(ref)) return null;
  }
  return headCommit(workdir);
}

/**
 * `workdirHead` with the reads in flight shared: launches of one workdir asked together (a burst) walk the repository
 * once, not once each. A read that starts after the previous one ended reads again (HEAD moves).
 */
export class WorkdirHeads {
  readonly #reading = new Map<string, Promise<string | null>>();

  /** The commit `workdir` is at (see `workdirHead`), from the read under way for it if there is one. */
  read(workdir: string): Promise<string | null> {
    const key = resolve(workdir);
    const under = this.#reading.get(key);
    if (under) return under;
    const read = workdirHead(key).finally(() => this.#reading.delete(key));
    this.#reading.set(key, read);
    return read;
  }
}
