import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { commitFile, gitSync, initRepo } from '../../../test/support/git-repo.ts';
import { tempDir } from '../../../test/support/temp-dir.ts';
import { AppError } from '../../core/errors.ts';
import { ensureWorktree, parseWorktreeList, worktreeDirName } from './worktree.ts';

describe('worktrees', () => {
  let dir: { path: string; remove: () => void };
  let repo: string;

  beforeEach(() => {
    dir = tempDir();
    repo = initRepo(join(dir.path, 'repo'));
  });
  afterEach(() => dir.remove());

  const options = (branch: string, extra: Partial<Parameters<typeof ensureWorktree>[0]> = {}) => ({
    repo,
    branch,
    root: join(repo, '.switchboard', 'worktrees'),
    remote: 'origin',
    fetch: false,
    ...extra,
  });

  it('branches a new worktree from HEAD when there is no remote, and reuses it on the next call', async () => {
    const head = gitSync(repo, 'rev-parse', 'HEAD');
    const first = await ensureWorktree(options('alice/eng-1-fix'));
    assert.equal(first.created, true);
    assert.equal(first.base, 'HEAD');
    assert.equal(first.path, join(repo, '.switchboard', 'worktrees', 'alice-eng-1-fix'));
    assert.equal(gitSync(first.path, 'rev-parse', 'HEAD'), head);
    assert.equal(gitSync(first.path, 'branch', '--show-current'), 'alice/eng-1-fix');
    assert.equal(first.excludeFile, join(repo, '.git', 'info', 'exclude'));
    const again = await ensureWorktree(options('alice/eng-1-fix'));
    assert.deepEqual({ created: again.created, path: again.path }, { created: false, path: first.path });
  });

  it("branches from the remote's default branch when it exists, without tracking it", async () => {
    const upstream = initRepo(join(dir.path, 'upstream'));
    const ahead = commitFile(upstream, 'new.txt', 'from upstream\n');
    gitSync(repo, 'remote', 'add', 'origin', upstream);
    gitSync(repo, 'fetch', '-q', 'origin');
    gitSync(repo, 'remote', 'set-head', 'origin', 'main');
    const wt = await ensureWorktree(options('eng-2'));
    assert.equal(wt.base, 'origin/main');
    assert.equal(gitSync(wt.path, 'rev-parse', 'HEAD'), ahead);
    assert.throws(() => gitSync(wt.path, 'rev-parse', '--abbrev-ref', 'eng-2@{upstream}'));
  });

  it('fetches the remote first when asked', async () => {
    const upstream = initRepo(join(dir.path, 'upstream'));
    gitSync(repo, 'remote', 'add', 'origin', upstream);
    gitSync(repo, 'fetch', '-q', 'origin');
    const later = commitFile(upstream, 'later.txt', 'later\n');
    const wt = await ensureWorktree(options('eng-3', { fetch: true }));
    assert.equal(gitSync(wt.path, 'rev-parse', 'HEAD'), later);
  });

  it('checks out an existing local branch in a new worktree', async () => {
    gitSync(repo, 'branch', 'eng-4');
    const wt = await ensureWorktree(options('eng-4'));
    assert.deepEqual({ created: wt.created, base: wt.base }, { created: true, base: null });
    assert.equal(gitSync(wt.path, 'branch', '--show-current'), 'eng-4');
  });

  it('recreates a worktree whose directory was deleted (prunable)', async () => {
    const first = await ensureWorktree(options('eng-5'));
    rmSync(first.path, { recursive: true, force: true });
    const again = await ensureWorktree(options('eng-5'));
    assert.deepEqual(
      { created: again.created, path: again.path, base: again.base },
      { created: true, path: first.path, base: null },
    );
    assert.equal(existsSync(join(again.path, 'README.md')), true);
  });

  it('refuses a branch name git refuses, naming the field', async () => {
    for (const bad of ['-x', 'a..b', 'has space', '']) {
      await assert.rejects(
        ensureWorktree(options(bad)),
        (e: unknown) => e instanceof AppError && e.field === 'branchName',
      );
    }
  });

  it("refuses a branch checked out in the repository's own checkout", async () => {
    gitSync(repo, 'switch', '-q', '-c', 'eng-6');
    await assert.rejects(ensureWorktree(options('eng-6')), /checked out in the repository itself/);
  });

  it('parses the porcelain list and names directories safely', () => {
    const list =
      'worktree /r\nHEAD abc\nbranch refs/heads/main\n\nworktree /r/x\nHEAD def\ndetached\nprunable gitdir file points to non-existent location\n';
    assert.deepEqual(parseWorktreeList(list), [
      { path: '/r', branch: 'refs/heads/main', prunable: false },
      { path: '/r/x', branch: null, prunable: true },
    ]);
    assert.equal(worktreeDirName('feat/ENG-1 ü..x/'), 'feat-ENG-1-..x');
  });
});
