// What a session changed: its working directory against the commit it started from, committed and uncommitted changes
// and new (untracked, not ignored) files. New files are diffed through a temporary index (a copy of the user's, with
// them added as intent-to-add via GIT_INDEX_FILE), so the user's index and working tree are never changed.
import { copyFile, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { AppError, conflict } from '../core/errors.ts';
import type { GitOutput } from './git-run.ts';
import { GitFailure, runGit } from './git-run.ts';

/** How one file changed. */
export type FileChangeStatus = 'added' | 'modified' | 'deleted' | 'renamed';

/** One changed file: its path (the new path of a rename, with `from` the old), its status and its line counts. */
export interface FileChange {
  path: string;
  from?: string;
  status: FileChangeStatus;
  additions: number;
  deletions: number;
  /** Set when git sees the file as binary (no line counts, no text patch). */
  binary?: boolean;
}

/** A working directory's changes against a base commit. */
export interface WorkdirDiff {
  /** The commit diffed against (the empty tree's id when the repository has no commits). */
  base: string;
  /** The commit HEAD is at now; absent when the repository has no commits. */
  head?: string;
  files: FileChange[];
  totals: { files: number; additions: number; deletions: number };
  /** The unified patch (absent when only the summary was asked for); cut at `maxPatchBytes` with a note. */
  patch?: string;
  /** True when the patch was cut. */
  truncated: boolean;
  /** Set when there were more new (untracked) files than one diff lists (`MAX_UNTRACKED_BYTES` of names): some are left out. */
  untrackedCut?: true;
  /** New directories that are git repositories of their own (not diffed: git sees only that they exist). */
  nestedRepositories?: string[];
}

/** What to diff and how much patch to keep. */
export interface WorkdirDiffOptions {
  /** The commit to diff against; HEAD when absent (or the empty tree in a repository without commits). */
  base?: string;
  /** Leave the patch out (the per-file summary only). */
  statOnly?: boolean;
  /** Cut the patch after this many bytes (default 1 MiB). */
  maxPatchBytes?: number;
  timeoutMs?: number;
}

const DEFAULT_MAX_PATCH = 1024 * 1024;
/** How many bytes of new files' names are listed (a workdir with an unignored node_modules has many). */
const MAX_UNTRACKED_BYTES = 4 * 1024 * 1024;
/** Flags that keep the output in one shape whatever the repository's config says (prefixes, relative paths, colour). */
const DIFF_FLAGS = [
  '--no-color',
  '--no-ext-diff',
  '--no-textconv',
  '--no-relative',
  '--src-prefix=a/',
  '--dst-prefix=b/',
  '-M',
];

async function git(
  cwd: string,
  args: string[],
  options: { env?: Record<string, string>; input?: string; maxBytes?: number; timeoutMs?: number },
): Promise<GitOutput> {
  const result = await runGit(cwd, args, options);
  if (result.code !== 0 && !result.truncated) {
    throw new AppError('internal', `git ${args[0] ?? ''} failed in ${cwd}: ${result.stderr || `exit ${result.code}`}`);
  }
  return result;
}

/** The id of `ref` as a commit, or null when it names none. */
async function commitId(cwd: string, ref: string): Promise<string | null> {
  const result = await runGit(cwd, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { maxBytes: 4096 });
  const id = result.stdout.trim();
  return result.code === 0 && id ? id : null;
}

/** Parses `git diff --name-status -z` into statuses by (new) path. */
function parseNameStatus(text: string): Map<string, { status: FileChangeStatus; from?: string }> {
  const parts = text.split('\0');
  const byPath = new Map<string, { status: FileChangeStatus; from?: string }>();
  for (let i = 0; i < parts.length;) {
    const code = parts[i++] ?? '';
    if (!code) continue;
    const letter = code[0];
    if (letter === 'R' || letter === 'C') {
      const from = parts[i++] ?? '';
      const to = parts[i++] ?? '';
      byPath.set(to, letter === 'R' ? { status: 'renamed', from } : { status: 'added' });
      continue;
    }
    const path = parts[i++] ?? '';
    byPath.set(path, { status: letter === 'A' ? 'added' : letter === 'D' ? 'deleted' : 'modified' });
  }
  return byPath;
}

/** Parses `git diff --numstat -z` (a rename's paths follow its counts as two more fields). */
function parseNumstat(text: string): { path: string; additions: number; deletions: number; binary: boolean }[] {
  const parts = text.split('\0');
  const rows: { path: string; additions: number; deletions: number; binary: boolean }[] = [];
  for (let i = 0; i < parts.length;) {
    const line = parts[i++] ?? '';
    if (!line) continue;
    const [added = '', deleted = '', ...rest] = line.split('\t');
    let path = rest.join('\t');
    if (path === '') {
      i++; // the old path of a rename
      path = parts[i++] ?? '';
    }
    const binary = added === '-' && deleted === '-';
    rows.push({ path, additions: binary ? 0 : Number(added), deletions: binary ? 0 : Number(deleted), binary });
  }
  return rows;
}

/** Cuts a patch at the last whole line within `max` bytes. */
function cutPatch(patch: string, max: number): { text: string; truncated: boolean } {
  if (Buffer.byteLength(patch) <= max) return { text: patch, truncated: false };
  const head = Buffer.from(patch).subarray(0, max).toString('utf8');
  const end = head.lastIndexOf('\n');
  return { text: end >= 0 ? head.slice(0, end + 1) : '', truncated: true };
}

/**
 * The changes of the working tree at `workdir` against `options.base` (committed since, uncommitted, and new files
 * that are not ignored). Throws a `conflict` AppError when `workdir` is not in a git repository or the base commit is
 * not in it, an `internal` one when git fails. Reads only: the user's index and files stay as they are.
 */
export async function diffWorkdir(workdir: string, options: WorkdirDiffOptions = {}): Promise<WorkdirDiff> {
  const found = await stat(workdir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (!found?.isDirectory()) throw conflict(`the session's workdir ${workdir} does not exist any more`);
  try {
    return await diffRepository(workdir, options);
  } catch (error) {
    // git missing, or past its time limit: said as such, not as a failure of the daemon.
    if (error instanceof GitFailure) throw new AppError('unavailable', error.message);
    throw error;
  }
}

async function diffRepository(workdir: string, options: WorkdirDiffOptions): Promise<WorkdirDiff> {
  const timeoutMs = options.timeoutMs;
  const top = await runGit(workdir, ['rev-parse', '--show-toplevel'], { maxBytes: 64 * 1024, timeoutMs });
  if (top.code !== 0) throw conflict(`${workdir} is not in a git repository, so there is no diff to show`);
  const head = (await commitId(workdir, 'HEAD')) ?? undefined;
  let base: string;
  if (options.base) {
    const found = await commitId(workdir, options.base);
    if (!found) throw conflict(`the base commit ${options.base} is not in the repository at ${workdir} any more`);
    base = found;
  } else if (head) {
    base = head;
  } else {
    base = (await git(workdir, ['hash-object', '-t', 'tree', '--stdin'], { input: '', timeoutMs })).stdout.trim();
  }

  const scratch = await mkdtemp(join(tmpdir(), 'switchboard-diff-'));
  try {
    const index = join(scratch, 'index');
    const indexPath = (await git(workdir, ['rev-parse', '--git-path', 'index'], { timeoutMs })).stdout.trim();
    const userIndex = isAbsolute(indexPath) ? indexPath : join(workdir, indexPath);
    await copyFile(userIndex, index).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error; // a repository nothing was ever added to has no index yet
    });
    const env = { GIT_INDEX_FILE: index };
    const untracked = await git(workdir, ['ls-files', '-z', '--others', '--exclude-standard', '--', ':/'], {
      env,
      timeoutMs,
      maxBytes: MAX_UNTRACKED_BYTES,
    });
    // A cut list ends in part of a name: only the whole names before the last NUL count. A name ending in `/` is a
    // new directory holding a repository of its own, which `git add` would refuse (or record as a submodule).
    const listed = untracked.truncated
      ? untracked.stdout.slice(0, untracked.stdout.lastIndexOf('\0') + 1)
      : untracked.stdout;
    const names = listed.split('\0').filter((name) => name !== '');
    const nested = names.filter((name) => name.endsWith('/'));
    const files = names.filter((name) => !name.endsWith('/'));
    if (files.length > 0) {
      await git(workdir, ['add', '--intent-to-add', '--pathspec-from-file=-', '--pathspec-file-nul'], {
        env,
        input: `${files.join('\0')}\0`,
        timeoutMs,
      });
    }
    const range = [base, '--', ':/'];
    const statuses = parseNameStatus(
      (await git(workdir, ['diff', ...DIFF_FLAGS, '--name-status', '-z', ...range], { env, timeoutMs })).stdout,
    );
    const changes: FileChange[] = parseNumstat(
      (await git(workdir, ['diff', ...DIFF_FLAGS, '--numstat', '-z', ...range], { env, timeoutMs })).stdout,
    ).map((row) => {
      const known = statuses.get(row.path) ?? { status: 'modified' as const };
      return {
        path: row.path,
        ...(known.from !== undefined ? { from: known.from } : {}),
        status: known.status,
        additions: row.additions,
        deletions: row.deletions,
        ...(row.binary ? { binary: true } : {}),
      };
    });
    const totals = {
      files: changes.length,
      additions: changes.reduce((sum, f) => sum + f.additions, 0),
      deletions: changes.reduce((sum, f) => sum + f.deletions, 0),
    };
    const result: WorkdirDiff = {
      base,
      ...(head ? { head } : {}),
      files: changes,
      totals,
      truncated: false,
      ...(untracked.truncated ? { untrackedCut: true as const } : {}),
      ...(nested.length > 0 ? { nestedRepositories: nested } : {}),
    };
    if (options.statOnly) return result;
    const max = options.maxPatchBytes ?? DEFAULT_MAX_PATCH;
    // One byte more than kept: git is stopped once it is over the limit, and the cut tells that it was.
    const patch = await git(workdir, ['diff', ...DIFF_FLAGS, ...range], { env, maxBytes: max + 1, timeoutMs });
    const cut = cutPatch(patch.stdout, max);
    return { ...result, patch: cut.text, truncated: cut.truncated || patch.truncated };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
