import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { commitFile, gitSync, initRepo } from '../../test/support/git-repo.ts';
import { managerPerTestOn } from '../../test/support/manager-on-store.ts';
import { tempDirPerTest } from '../../test/support/temp-dir.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import { AppError } from '../core/errors.ts';
import { diffWorkdir } from './git-diff.ts';
import { headCommit } from './git-run.ts';

/** A repository with a base commit, then: a commit, an uncommitted edit, a new file, a deletion and a binary file. */
function changedRepo(path: string): { repo: string; base: string } {
  const repo = initRepo(join(path, 'repo'));
  commitFile(repo, 'keep.txt', 'one\ntwo\nthree\n');
  commitFile(repo, 'gone.txt', 'bye\n');
  commitFile(repo, 'old-name.txt', 'a file\nthat moves\nto a new name\n');
  writeFileSync(join(repo, '.gitignore'), 'ignored.log\n');
  gitSync(repo, 'add', '.gitignore');
  gitSync(repo, 'commit', '-q', '-m', 'ignore');
  const base = gitSync(repo, 'rev-parse', 'HEAD');
  commitFile(repo, 'committed.txt', 'a\nb\n'); // committed after the base
  writeFileSync(join(repo, 'keep.txt'), 'one\nTWO\nthree\nfour\n'); // uncommitted edit
  mkdirSync(join(repo, 'src dir'));
  writeFileSync(join(repo, 'src dir', 'new file.ts'), 'export const x = 1;\n'); // untracked, with spaces
  writeFileSync(join(repo, 'naïve.md'), 'utf-8 name\n'); // untracked, non-ASCII name
  rmSync(join(repo, 'gone.txt')); // deleted, not staged
  gitSync(repo, 'mv', 'old-name.txt', 'new-name.txt'); // renamed (staged)
  writeFileSync(join(repo, 'image.bin'), Buffer.from([0, 1, 2, 0, 255, 0, 3])); // untracked binary
  writeFileSync(join(repo, 'ignored.log'), 'noise\n'); // ignored: never shown
  return { repo, base };
}

describe('diffWorkdir', () => {
  const dir = tempDirPerTest({ prefix: 'sb-diff-' });

  it('shows committed, uncommitted, new, deleted and binary changes against the base', async () => {
    const { repo, base } = changedRepo(dir.path);
    // The repository's own diff settings do not change the shape of the answer.
    gitSync(repo, 'config', 'diff.noprefix', 'true');
    gitSync(repo, 'config', 'diff.relative', 'true');
    gitSync(repo, 'config', 'color.diff', 'always');
    const indexBefore = readFileSync(join(repo, '.git', 'index'));
    const statusBefore = gitSync(repo, 'status', '--porcelain=v1', '-z');
    const diff = await diffWorkdir(repo, { base });
    assert.equal(diff.base, base);
    assert.equal(diff.head, gitSync(repo, 'rev-parse', 'HEAD'));
    const byPath = new Map(diff.files.map((f) => [f.path, f]));
    assert.deepEqual([...byPath.keys()].sort(), [
      'committed.txt',
      'gone.txt',
      'image.bin',
      'keep.txt',
      'naïve.md',
      'new-name.txt',
      'src dir/new file.ts',
    ]);
    assert.deepEqual(byPath.get('new-name.txt'), {
      path: 'new-name.txt',
      from: 'old-name.txt',
      status: 'renamed',
      additions: 0,
      deletions: 0,
    });
    assert.deepEqual(byPath.get('committed.txt'), {
      path: 'committed.txt',
      status: 'added',
      additions: 2,
      deletions: 0,
    });
    assert.deepEqual(byPath.get('keep.txt'), { path: 'keep.txt', status: 'modified', additions: 2, deletions: 1 });
    assert.deepEqual(byPath.get('gone.txt'), { path: 'gone.txt', status: 'deleted', additions: 0, deletions: 1 });
    assert.equal(byPath.get('src dir/new file.ts')?.status, 'added');
    assert.equal(byPath.get('naïve.md')?.additions, 1);
    assert.deepEqual(byPath.get('image.bin'), {
      path: 'image.bin',
      status: 'added',
      additions: 0,
      deletions: 0,
      binary: true,
    });
    assert.deepEqual(diff.totals, { files: 7, additions: 6, deletions: 2 });
    assert.equal(diff.truncated, false);
    const patch = diff.patch ?? '';
    assert.match(patch, /^diff --git a\/keep\.txt b\/keep\.txt$/m);
    assert.match(patch, /^\+TWO$/m);
    assert.match(patch, /^\+export const x = 1;$/m);
    assert.match(patch, /^diff --git a\/naïve\.md b\/naïve\.md$/m); // core.quotepath=off
    assert.match(patch, /^rename from old-name\.txt$/m);
    assert.match(patch, /Binary files \/dev\/null and b\/image\.bin differ/);
    assert.doesNotMatch(patch, /ignored\.log/);
    // Nothing of the user's changed: the same index bytes and the same status (new files still untracked).
    assert.deepEqual(readFileSync(join(repo, '.git', 'index')), indexBefore);
    assert.equal(gitSync(repo, 'status', '--porcelain=v1', '-z'), statusBefore);
  });

  it('leaves the patch out when only the summary is asked for, and cuts a large patch at a line', async () => {
    const { repo, base } = changedRepo(dir.path);
    const stat = await diffWorkdir(repo, { base, statOnly: true });
    assert.equal(stat.patch, undefined);
    assert.equal(stat.files.length, 7);
    const cut = await diffWorkdir(repo, { base, maxPatchBytes: 200 });
    assert.equal(cut.truncated, true);
    assert.ok(Buffer.byteLength(cut.patch ?? '') <= 200);
    assert.ok(cut.patch?.endsWith('\n'));
    assert.equal(cut.files.length, 7, 'the summary is whole even when the patch is cut');
  });

  it('diffs against HEAD without a base, and against the empty tree in a repository without commits', async () => {
    const { repo } = changedRepo(dir.path);
    const sinceHead = await diffWorkdir(repo);
    assert.ok(!sinceHead.files.some((f) => f.path === 'committed.txt'));
    assert.ok(sinceHead.files.some((f) => f.path === 'keep.txt'));
    const empty = join(dir.path, 'empty');
    mkdirSync(empty);
    gitSync(empty, 'init', '-q');
    writeFileSync(join(empty, 'first.txt'), 'hello\n');
    const fresh = await diffWorkdir(empty);
    assert.equal(fresh.head, undefined);
    assert.deepEqual(fresh.files, [{ path: 'first.txt', status: 'added', additions: 1, deletions: 0 }]);
    assert.equal(await headCommit(empty), null);
    assert.throws(() => statSync(join(empty, '.git', 'index')), /ENOENT/); // still no index of the user's
  });

  it('leaves out new folders that are repositories of their own, and says which', async () => {
    const { repo, base } = changedRepo(dir.path);
    mkdirSync(join(repo, 'scaffold'));
    gitSync(join(repo, 'scaffold'), 'init', '-q'); // no commit: `git add` would refuse it
    writeFileSync(join(repo, 'scaffold', 'app.ts'), 'x\n');
    const diff = await diffWorkdir(repo, { base });
    assert.deepEqual(diff.nestedRepositories, ['scaffold/']);
    assert.equal(diff.files.length, 7);
    assert.ok(!diff.files.some((f) => f.path.startsWith('scaffold')));
  });

  it('answers clearly for a workdir outside git and for a base that is gone', async () => {
    const plain = join(dir.path, 'plain');
    mkdirSync(plain);
    assert.equal(await headCommit(plain), null);
    await assert.rejects(diffWorkdir(plain), (error: unknown) => {
      assert.ok(error instanceof AppError);
      assert.equal(error.kind, 'conflict');
      assert.match(error.message, /is not in a git repository/);
      return true;
    });
    const { repo } = changedRepo(dir.path);
    await assert.rejects(diffWorkdir(repo, { base: 'f'.repeat(40) }), /is not in the repository/);
    await assert.rejects(diffWorkdir(join(dir.path, 'removed')), /does not exist any more/);
  });
});

describe('the base recorded at launch', () => {
  const { f } = managerPerTestOn((path) => openTestStore(path));

  it('records HEAD when launched, keeps it on an in-place resume, and none outside git', async () => {
    const repo = initRepo(join(f.workdir, 'repo'));
    const base = gitSync(repo, 'rev-parse', 'HEAD');
    const session = await f.manager.launch({ prompt: 'change things', workdir: repo, originChannel: 'cli' });
    assert.equal((await f.manager.get(session.id)).spec.baseCommit, base);
    await f.harness.last.emit({ type: 'started', backendSessionId: 'b-1' });
    commitFile(repo, 'later.txt', 'x\n');
    await f.harness.last.emit({ type: 'turnEnd', outcome: { ok: true }, costUsd: 0 });
    await f.manager.kill(session.id);
    await f.manager.resume(session.id, { prompt: 'more' });
    assert.equal((await f.manager.get(session.id)).spec.baseCommit, base);
    const diff = await diffWorkdir(repo, { base });
    assert.deepEqual(
      diff.files.map((file) => file.path),
      ['later.txt'],
    );

    const outside = await f.manager.launch({ prompt: 'no git', workdir: f.workdir, originChannel: 'cli' });
    assert.equal((await f.manager.get(outside.id)).spec.baseCommit, undefined);
  });
});
