// One git worktree per issue, on Linear's branch name. git runs asynchronously through execFile (never a shell,
// never sync on the event loop). A new branch starts from the remote's default branch when it exists, else HEAD.
import { execFile } from 'node:child_process';
import { isAbsolute, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { invalidInput } from '../../core/errors.ts';

const run = promisify(execFile);
const GIT_TIMEOUT_MS = 120_000;

/** A failed git command, with its arguments and stderr. */
export class GitError extends Error {
  readonly args: readonly string[];
  readonly stderr: string;

  constructor(args: readonly string[], stderr: string, message: string) {
    super(`git ${args.join(' ')} failed: ${stderr.trim() || message}`);
    this.name = 'GitError';
    this.args = args;
    this.stderr = stderr;
  }
}

/** Runs `git <args>` in `cwd` without a shell; resolves to trimmed stdout, rejects with GitError. */
export async function git(cwd: string, args: readonly string[]): Promise<string> {
  try {
    const { stdout } = await run('git', [...args], {
      cwd,
      timeout: GIT_TIMEOUT_MS,
      maxBuffer: 16 * 1024 * 1024,
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C' },
    });
    return stdout.trim();
  } catch (error) {
    const e = error as { stderr?: string; message?: string };
    throw new GitError(args, e.stderr ?? '', e.message ?? String(error));
  }
}

async function gitOk(cwd: string, args: readonly string[]): Promise<boolean> {
  try {
    await git(cwd, args);
    return true;
  } catch {
    return false;
  }
}

/** A worktree as `git worktree list --porcelain` reports it. */
export interface WorktreeEntry {
  path: string;
  /** Full ref (refs/heads/x), or null when detached. */
  branch: string | null;
  prunable: boolean;
}

/** Parses `git worktree list --porcelain`. Pure. */
export function parseWorktreeList(output: string): WorktreeEntry[] {
  const entries: WorktreeEntry[] = [];
  for (const block of output.split(/\n\s*\n/)) {
    let path: string | null = null;
    let branch: string | null = null;
    let prunable = false;
    for (const line of block.split('\n')) {
      if (line.startsWith('worktree ')) path = line.slice('worktree '.length);
      else if (line.startsWith('branch ')) branch = line.slice('branch '.length);
      else if (line.startsWith('prunable')) prunable = true;
    }
    if (path) entries.push({ path, branch, prunable });
  }
  return entries;
}

/** A directory name for a branch: `alice/eng-12-fix` → `alice-eng-12-fix`. Pure. */
export function worktreeDirName(branch: string): string {
  return (
    branch
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^[-.]+|[-.]+$/g, '')
      .slice(0, 100) || 'worktree'
  );
}

/** Checks a branch name with `git check-ref-format --branch`; throws invalid_input when git refuses it. */
export async function checkBranchName(repo: string, branch: string): Promise<void> {
  if (!branch || branch.startsWith('-') || !(await gitOk(repo, ['check-ref-format', '--branch', branch]))) {
    throw invalidInput(`branchName: "${branch}" is not a valid git branch name`, 'branchName');
  }
}

/**
 * The start point for a new branch: the remote's default branch (`<remote>/HEAD`'s target, else `<remote>/main` or
 * `<remote>/master`) when it exists, else HEAD.
 */
export async function defaultBase(repo: string, remote: string): Promise<string> {
  try {
    const ref = await git(repo, ['symbolic-ref', '--quiet', `refs/remotes/${remote}/HEAD`]);
    if (ref.startsWith('refs/remotes/')) return ref.slice('refs/remotes/'.length);
  } catch {
    // no <remote>/HEAD: try the usual names
  }
  for (const name of ['main', 'master']) {
    if (await gitOk(repo, ['rev-parse', '--verify', '--quiet', `refs/remotes/${remote}/${name}^{commit}`]))
      return `${remote}/${name}`;
  }
  return 'HEAD';
}

export interface EnsureWorktreeOptions {
  repo: string;
  branch: string;
  /** Directory under which new worktrees are made. */
  root: string;
  remote: string;
  /** Fetch the remote before branching a new worktree from it (failures are reported, not fatal). */
  fetch: boolean;
  onWarning?: (message: string) => void;
}

export interface WorktreeResult {
  path: string;
  /** False when an existing worktree of the branch was reused. */
  created: boolean;
  /** What a new branch started from (null when the branch or worktree already existed). */
  base: string | null;
  /** The git file of the repository's shared `info/exclude`. */
  excludeFile: string;
}

/**
 * Makes sure a worktree of `branch` exists and returns it. An existing worktree of the branch is reused (rework,
 * restart); an existing local branch gets a new worktree; otherwise the branch is created (without upstream tracking)
 * from the remote's default branch, else HEAD. A branch checked out in the main worktree is refused (the agent would
 * otherwise work in the user's own checkout).
 */
export async function ensureWorktree(options: EnsureWorktreeOptions): Promise<WorktreeResult> {
  const repo = resolve(options.repo);
  const top = await git(repo, ['rev-parse', '--show-toplevel']).catch((error: unknown) => {
    throw invalidInput(
      `repo: ${repo} is not a git repository (${error instanceof Error ? error.message : String(error)})`,
      'repo',
    );
  });
  await checkBranchName(top, options.branch);
  const excludeFile = await excludePath(top);
  const ref = `refs/heads/${options.branch}`;
  let entries = parseWorktreeList(await git(top, ['worktree', 'list', '--porcelain']));
  if (entries.some((e) => e.prunable)) {
    await git(top, ['worktree', 'prune']);
    entries = parseWorktreeList(await git(top, ['worktree', 'list', '--porcelain']));
  }
  const existing = entries.find((e) => e.branch === ref);
  if (existing && existing.path === entries[0]?.path) {
    throw invalidInput(
      `branchName: ${options.branch} is checked out in the repository itself (${existing.path}); switch that checkout to another branch first`,
      'branchName',
    );
  }
  if (existing) return { path: existing.path, created: false, base: null, excludeFile };
  const root = isAbsolute(options.root) ? options.root : resolve(top, options.root);
  const path = join(root, worktreeDirName(options.branch));
  if (await gitOk(top, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])) {
    await git(top, ['worktree', 'add', path, options.branch]);
    return { path, created: true, base: null, excludeFile };
  }
  if (options.fetch && (await gitOk(top, ['remote', 'get-url', options.remote]))) {
    try {
      await git(top, ['fetch', '--quiet', options.remote]);
    } catch (error) {
      options.onWarning?.(
        `could not fetch ${options.remote}; branching from what is known locally: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  const base = await defaultBase(top, options.remote);
  await git(top, ['worktree', 'add', '--no-track', '-b', options.branch, path, base]);
  return { path, created: true, base, excludeFile };
}

/** The absolute path of the repository's shared `info/exclude` (common to all its worktrees). */
export async function excludePath(repoOrWorktree: string): Promise<string> {
  const path = await git(repoOrWorktree, ['rev-parse', '--path-format=absolute', '--git-common-dir']);
  return join(path, 'info', 'exclude');
}
