// session_pr's backend end to end: a real git working directory, a bare repository as the remote (pushed to over its
// file path), the fake GitHub REST API through Octokit, and a real SQLite store.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { FakeGithub } from '../../test/support/fake-github.ts';
import { startFakeGithub } from '../../test/support/fake-github.ts';
import { addBareOrigin, commitFile, gitSync, initRepo } from '../../test/support/git-repo.ts';
import { tempDir } from '../../test/support/temp-dir.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import { systemClock } from '../core/clock.ts';
import { githubSchema } from '../core/config-github.ts';
import { AppError } from '../core/errors.ts';
import { silentLogger } from '../core/logger.ts';
import { SessionPullRequestStore } from '../store/github-pull-requests.ts';
import type { GithubApi } from './client.ts';
import { GithubRest } from './client.ts';
import type { GitRunner } from './git.ts';
import { runGit } from './git.ts';
import type { PullRequestRequest } from './pull-requests.ts';
import { SessionPullRequests } from './pull-requests.ts';

const TOKEN = 'ghp_secret_token_123';

describe('SessionPullRequests', () => {
  let dir: ReturnType<typeof tempDir>;
  let github: FakeGithub;
  let calls: { args: readonly string[]; env: Record<string, string> | undefined }[];
  const git: GitRunner = (cwd, args, env) => {
    calls.push({ args, env });
    return runGit(cwd, args, env);
  };

  beforeEach(async () => {
    dir = tempDir('sb-github-pr-');
    github = await startFakeGithub();
    calls = [];
  });
  afterEach(async () => {
    await github.close();
    dir.remove();
  });

  async function setup(options: { repo?: string; api?: (real: GithubApi) => GithubApi } = {}) {
    const remote = join(dir.path, 'remote.git');
    const work = initRepo(join(dir.path, 'work'));
    addBareOrigin(work, remote);
    const config = githubSchema.parse({ enabled: true, repo: options.repo ?? 'acme/widgets' });
    const real = new GithubRest({ kind: 'token', token: TOKEN, source: 'test' }, github.url, silentLogger());
    const db = (await openTestStore(join(dir.path, 'state.db'))).db;
    const store = new SessionPullRequestStore(db);
    const service = new SessionPullRequests({
      config,
      api: options.api ? options.api(real) : real,
      store,
      git,
      clock: systemClock(),
      logger: silentLogger(),
    });
    return { remote, work, service, store };
  }

  const request = (work: string, extra: Partial<PullRequestRequest> = {}): PullRequestRequest => ({
    session: {
      id: 'sess-1',
      name: 'fix-login',
      harness: 'claude',
      prompt: '  Fix the login bug\nand add a test',
      costUsd: 1.25,
      lastOutput: ['Done: renewed the cookie.'],
      pageBase: 'http://127.0.0.1:7777',
    },
    workdir: work,
    ...extra,
  });

  it('commits the uncommitted work, pushes a new branch, opens one PR; a repeat answers the same PR', async () => {
    const { remote, work, service } = await setup();
    writeFileSync(join(work, 'README.md'), '# changed\n');
    writeFileSync(join(work, 'new-file.txt'), 'new\n');
    const first = await service.open(request(work));
    assert.equal(first.outcome, 'opened');
    assert.equal(first.branch, 'switchboard/fix-login');
    assert.equal(first.base, 'main');
    assert.equal(first.committed, 'Fix the login bug');
    assert.equal(first.number, 1);
    assert.equal(first.url, 'https://github.example/acme/widgets/pull/1');
    assert.equal(github.pulls.length, 1);
    const pull = github.pulls[0];
    assert.equal(pull?.title, 'Fix the login bug');
    assert.equal(pull?.head, 'switchboard/fix-login');
    assert.equal(pull?.base, 'main');
    assert.match(pull?.body ?? '', /Done: renewed the cookie\./);
    assert.match(pull?.body ?? '', /http:\/\/127\.0\.0\.1:7777\/#session=sess-1/);
    // The branch reached the bare remote with the new file; main is untouched there.
    assert.equal(gitSync(remote, 'show', 'switchboard/fix-login:new-file.txt'), 'new');
    assert.equal(gitSync(remote, 'log', '-1', '--format=%s', 'switchboard/fix-login'), 'Fix the login bug');
    assert.equal(gitSync(remote, 'log', '-1', '--format=%s', 'main'), 'first');
    assert.equal(gitSync(work, 'status', '--porcelain'), '');

    const again = await service.open(request(work));
    assert.equal(again.outcome, 'existing');
    assert.equal(again.number, 1);
    assert.equal(again.url, first.url);
    assert.equal(again.committed, null);
    assert.equal(github.pulls.length, 1, 'no second PR');
    assert.equal(github.requests.filter((r) => r.method === 'POST').length, 1);

    // More work later goes onto the same PR's branch.
    writeFileSync(join(work, 'later.txt'), 'later\n');
    const later = await service.open(request(work, { title: 'Follow-up' }));
    assert.equal(later.outcome, 'existing');
    assert.equal(later.committed, 'Follow-up');
    assert.equal(gitSync(remote, 'log', '-1', '--format=%s', 'switchboard/fix-login'), 'Follow-up');
    assert.equal(github.pulls.length, 1);

    // Commits the agent made itself (nothing left uncommitted) are pushed onto the PR's branch too.
    const own = commitFile(work, 'own.txt', 'own\n');
    const pushed = await service.open(request(work));
    assert.equal(pushed.outcome, 'existing');
    assert.equal(pushed.committed, null);
    assert.equal(gitSync(remote, 'rev-parse', 'switchboard/fix-login'), own);
    assert.equal(github.pulls.length, 1);
  });

  it('finds and records a PR opened just before a crash instead of opening a second one', async () => {
    let crashOnce = true;
    const { work, service, store } = await setup({
      api: (real) => ({
        defaultBranch: (r) => real.defaultBranch(r),
        findOpenPull: (r, b) => real.findOpenPull(r, b),
        token: () => real.token(),
        createPull: async (r, p) => {
          const pull = await real.createPull(r, p);
          if (crashOnce) {
            crashOnce = false;
            throw new Error('crashed after opening');
          }
          return pull;
        },
      }),
    });
    writeFileSync(join(work, 'a.txt'), 'a\n');
    await assert.rejects(service.open(request(work)), /crashed after opening/);
    assert.equal((await store.get('sess-1'))?.state, 'pending');
    const repeat = await service.open(request(work));
    assert.equal(repeat.outcome, 'found');
    assert.equal(repeat.number, 1);
    assert.equal(github.pulls.length, 1);
    assert.equal((await store.get('sess-1'))?.state, 'opened');
  });

  it('pushes a branch it did not create plainly, and a rejected non-fast-forward is an error that says so', async () => {
    const { remote, work, service } = await setup();
    gitSync(work, 'switch', '-q', '-c', 'feature');
    commitFile(work, 'f.txt', 'mine\n');
    // Someone else pushed to feature meanwhile.
    const other = join(dir.path, 'other');
    gitSync(dir.path, 'clone', '-q', remote, other);
    gitSync(other, 'switch', '-q', '-c', 'feature');
    commitFile(other, 'g.txt', 'theirs\n');
    gitSync(other, 'push', '-q', 'origin', 'feature');
    const theirs = gitSync(remote, 'rev-parse', 'feature');

    await assert.rejects(service.open(request(work)), (error: unknown) => {
      assert.ok(error instanceof AppError);
      assert.equal(error.kind, 'conflict');
      assert.match(error.message, /non-fast-forward/);
      return true;
    });
    const push = calls.find((c) => c.args[0] === 'push');
    assert.deepEqual(push?.args, ['push', '--quiet', 'origin', 'HEAD:refs/heads/feature'], 'no force');
    assert.equal(gitSync(remote, 'rev-parse', 'feature'), theirs, 'their commit stays');
    assert.equal(github.pulls.length, 0);
  });

  it('uses the base asked for, and a detached HEAD gets a switchboard branch', async () => {
    const { remote, work, service } = await setup();
    gitSync(work, 'push', '-q', 'origin', 'main:release');
    gitSync(work, 'switch', '-q', '--detach');
    commitFile(work, 'r.txt', 'r\n');
    const result = await service.open(request(work, { base: 'release', title: 'Release fix', draft: true }));
    assert.equal(result.branch, 'switchboard/fix-login');
    assert.equal(result.base, 'release');
    assert.equal(github.pulls[0]?.base, 'release');
    assert.equal(github.pulls[0]?.draft, true);
    assert.equal(github.pulls[0]?.title, 'Release fix');
    assert.equal(gitSync(remote, 'show', 'switchboard/fix-login:r.txt'), 'r');
  });

  it('gives git the token only in its environment: never in argv, nor in .git/config', async () => {
    // The remote is served over http by the fake (which is no git server): the push fails, but the request it got
    // carries the credentials.
    const { work, service } = await setup({ repo: 'acme/widgets' });
    gitSync(work, 'remote', 'set-url', 'origin', `${github.url}/acme/widgets.git`);
    writeFileSync(join(work, 'x.txt'), 'x\n');
    await assert.rejects(service.open(request(work)), /git push of switchboard\/fix-login failed/);
    const gitRequest = github.requests.find((r) => r.path.startsWith('/acme/widgets.git/'));
    const expected = `basic ${Buffer.from(`x-access-token:${TOKEN}`).toString('base64')}`;
    assert.equal(String(gitRequest?.headers.authorization).toLowerCase(), expected.toLowerCase());
    for (const call of calls) assert.ok(!call.args.join(' ').includes(TOKEN), `argv of git ${call.args[0]}`);
    const push = calls.find((c) => c.args[0] === 'push');
    assert.equal(push?.env?.GIT_CONFIG_KEY_0, `http.${github.url}/.extraheader`);
    const config = readFileSync(join(work, '.git', 'config'), 'utf8');
    assert.ok(!config.includes(TOKEN) && !config.includes('extraheader'), 'nothing stored in .git/config');
  });
});
