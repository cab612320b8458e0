import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { commitFile, gitSync, initRepo } from '../../test/support/git-repo.ts';
import { tempDir } from '../../test/support/temp-dir.ts';
import { workdirHead, WorkdirHeads } from './git-head.ts';

let dir: { path: string; remove: () => void };
beforeEach(() => {
  dir = tempDir('sb-git-head-');
});
afterEach(() => dir.remove());

describe('workdirHead (read from the repository files)', () => {
  it('agrees with git rev-parse: a branch, a subfolder, packed refs, a detached HEAD, a worktree', async () => {
    const repo = initRepo(join(dir.path, 'repo'));
    const first = gitSync(repo, 'rev-parse', 'HEAD');
    const sub = join(repo, 'src', 'deep');
    mkdirSync(sub, { recursive: true });
    assert.equal(await workdirHead(repo), first);
    assert.equal(await workdirHead(sub), first);
    commitFile(repo, 'b.txt', 'b');
    const second = gitSync(repo, 'rev-parse', 'HEAD');
    gitSync(repo, 'pack-refs', '--all');
    assert.equal(await workdirHead(repo), second, 'the ref only in packed-refs');
    gitSync(repo, 'checkout', '-q', '--detach', first);
    assert.equal(await workdirHead(repo), first, 'detached');
    gitSync(repo, 'checkout', '-q', '-');
    const tree = join(dir.path, 'tree');
    gitSync(repo, 'worktree', 'add', '-q', '-b', 'feature', tree);
    commitFile(tree, 'c.txt', 'c');
    assert.equal(await workdirHead(tree), gitSync(tree, 'rev-parse', 'HEAD'), 'a linked worktree');
    assert.equal(await workdirHead(repo), second);
  });

  it('is null outside a repository and on a branch with no commit yet', async () => {
    const plain = join(dir.path, 'plain');
    mkdirSync(plain);
    assert.equal(await workdirHead(plain), null);
    const empty = join(dir.path, 'empty');
    mkdirSync(empty);
    gitSync(empty, 'init', '-q', '-b', 'main');
    assert.equal(await workdirHead(empty), null);
  });
});

describe('WorkdirHeads (reads shared while under way)', () => {
  it('launches that ask at once share one read; a read asked after it ended sees the new HEAD', async () => {
    const repo = initRepo(join(dir.path, 'repo'));
    const heads = new WorkdirHeads();
    const together = Array.from({ length: 20 }, () => heads.read(repo));
    assert.equal(new Set(together).size, 1, 'one read for all twenty');
    assert.equal(heads.read(join(repo, '.')), together[0], 'the same folder however it is written');
    const first = gitSync(repo, 'rev-parse', 'HEAD');
    assert.deepEqual(new Set(await Promise.all(together)), new Set([first]));
    commitFile(repo, 'b.txt', 'b');
    assert.equal(await heads.read(repo), gitSync(repo, 'rev-parse', 'HEAD'));
    const plain = join(dir.path, 'plain');
    mkdirSync(plain);
    assert.equal(await heads.read(plain), null);
  });
});
