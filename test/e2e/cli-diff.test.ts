// `switchboard diff` as a user runs it, against a daemon with the fake Claude CLI: a session launched in a git
// repository, whose workdir then gets a commit, an uncommitted edit and a new file, shows all three against the commit
// it was launched at (plain, --stat, --json); a session outside git is answered clearly; a session with no recorded
// base is diffed against HEAD and says so.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { SessionDiffResult } from '../../src/operations/diff.ts';
import { cliDaemon, switchboard } from '../support/cli.ts';
import { commitFile, gitSync, initRepo } from '../support/git-repo.ts';

describe('switchboard diff', () => {
  const rig = cliDaemon('sb-cli-diff-');
  const { dir, env } = rig;

  async function launch(workdir: string, name: string): Promise<void> {
    const launched = await switchboard(['launch', 'change', 'things', '--workdir', workdir, '--name', name], env);
    assert.equal(launched.code, 0, launched.stderr);
  }

  it('shows committed, uncommitted and new files against the commit the session was launched at', async () => {
    const repo = initRepo(join(dir, 'repo'));
    const base = gitSync(repo, 'rev-parse', 'HEAD');
    await launch(repo, 'differ');
    commitFile(repo, 'committed.txt', 'one\ntwo\n');
    writeFileSync(join(repo, 'README.md'), '# test repo\nmore\n');
    writeFileSync(join(repo, 'fresh.ts'), 'export {};\n');

    const plain = await switchboard(['diff', 'differ'], env);
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, new RegExp(`differ: 3 files changed, \\+4 -0 since ${base.slice(0, 12)}`));
    assert.match(plain.stdout, /^A \+2 -0 committed\.txt$/m);
    assert.match(plain.stdout, /^M \+1 -0 README\.md$/m);
    assert.match(plain.stdout, /^A \+1 -0 fresh\.ts$/m);
    assert.match(plain.stdout, /^\+export \{\};$/m);

    const stat = await switchboard(['diff', 'differ', '--stat'], env);
    assert.equal(stat.code, 0, stat.stderr);
    assert.match(stat.stdout, /^A \+1 -0 fresh\.ts$/m);
    assert.doesNotMatch(stat.stdout, /^diff --git/m);

    const json = await switchboard(['diff', 'differ', '--json'], env);
    assert.equal(json.code, 0, json.stderr);
    const result = JSON.parse(json.stdout) as SessionDiffResult;
    assert.equal(result.base, base);
    assert.equal(result.baseFrom, 'launch');
    assert.equal(result.head, gitSync(repo, 'rev-parse', 'HEAD'));
    assert.deepEqual(result.totals, { files: 3, additions: 4, deletions: 0 });
    assert.deepEqual(result.files.map((f) => [f.path, f.status]).sort(), [
      ['README.md', 'modified'],
      ['committed.txt', 'added'],
      ['fresh.ts', 'added'],
    ]);
    assert.equal(result.truncated, false);
    assert.match(result.patch ?? '', /^diff --git a\/fresh\.ts b\/fresh\.ts$/m);
    // The user's index is untouched: the new file is still untracked.
    assert.match(gitSync(repo, 'status', '--porcelain'), /^\?\? fresh\.ts$/m);
  });

  it('answers a workdir outside git clearly, and diffs a session without a base against HEAD', async () => {
    const plainDir = join(dir, 'plain');
    mkdirSync(plainDir);
    await launch(plainDir, 'nogit');
    const refused = await switchboard(['diff', 'nogit'], env);
    assert.equal(refused.code, 2, 'a workdir outside git is bad input');
    assert.match(refused.stderr, /is not in a git repository/);

    // The repository appears after the launch: like a session launched before bases were recorded.
    initRepo(plainDir);
    writeFileSync(join(plainDir, 'README.md'), '# changed\n');
    const sinceHead = await switchboard(['diff', 'nogit'], env);
    assert.equal(sinceHead.code, 0, sinceHead.stderr);
    assert.match(sinceHead.stdout, /\(HEAD\)/);
    assert.match(sinceHead.stdout, /No base commit was recorded for this session/);
    assert.match(sinceHead.stdout, /^M \+1 -1 README\.md$/m);
  });
});
