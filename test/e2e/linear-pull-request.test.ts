// A Linear dispatch whose audit passes ends in a pull request (linear.pipeline.onPass): the worker's worktree branch is
// pushed to a local bare repository (the remote), one PR is opened on the fake GitHub through Octokit, the PR is
// attached to the issue in the fake Linear, the issue moves to the team's review state and the agent session's one
// response links the PR. `onPass: done` keeps the issue-done ending; a PR opened before a crash cut off its record is
// found by its branch and not opened again.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { systemClock } from '../../src/core/clock.ts';
import { githubSchema } from '../../src/core/config-github.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { GithubRest } from '../../src/github/client.ts';
import { runGit } from '../../src/github/git.ts';
import { SessionPullRequests } from '../../src/github/pull-requests.ts';
import { SessionPullRequestStore } from '../../src/store/github-pull-requests.ts';
import type { DispatchRecord } from '../../src/store/linear-dispatch-types.ts';
import type { FakeGithub } from '../support/fake-github.ts';
import { startFakeGithub } from '../support/fake-github.ts';
import type { FakeIssue } from '../support/fake-linear-workspace.ts';
import { addBareOrigin, commitFile, gitSync } from '../support/git-repo.ts';
import type { LinearE2E } from '../support/linear-e2e.ts';
import { agentSessionCreated, agentSessionPrompted, CHAT, linearE2E } from '../support/linear-e2e.ts';
import { waitFor } from '../support/wait-for.ts';

const REPO = 'acme/app';

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

interface Rig {
  r: LinearE2E;
  github: FakeGithub;
  remote: string;
}

/** The Linear rig with the fake GitHub's pull-request service and a bare repository as `origin` of the repo. */
async function rig(overrides: Record<string, unknown> = {}, options: { origin?: boolean } = {}): Promise<Rig> {
  const github = await startFakeGithub();
  cleanups.push(() => github.close());
  const r = await linearE2E(overrides, {
    pullRequests: (db) =>
      new SessionPullRequests({
        config: githubSchema.parse({ enabled: true, repo: REPO }),
        api: new GithubRest({ kind: 'token', token: 'ghp_test', source: 'test' }, github.url, silentLogger()),
        store: new SessionPullRequestStore(db),
        git: runGit,
        clock: systemClock(),
        logger: silentLogger(),
      }),
  });
  cleanups.push(() => r.close());
  const remote = join(r.dir, 'remote.git');
  if (options.origin === false) return { r, github, remote };
  addBareOrigin(r.repo, remote);
  return { r, github, remote };
}

/** Adds "In Review" (started) to a team of the rig. */
function addReviewState(r: LinearE2E, teamId: string): void {
  const id = r.ws.newId();
  r.ws.states.set(id, { id, name: 'In Review', type: 'started', teamId });
}

/** The issue most tests dispatch ("Add a greeting", estimate 1, team OK), its team given a review state first. */
function greetingIssue(r: LinearE2E): FakeIssue {
  addReviewState(r, r.teams.OK);
  return r.ws.addIssue({ teamId: r.teams.OK, title: 'Add a greeting', description: 'Say hello.', estimate: 1 });
}

/** The issue's branch, made in the repository with one commit of work (the worker's worktree checks it out). */
function branchWithWork(r: LinearE2E, issue: FakeIssue): string {
  gitSync(r.repo, 'switch', '-q', '-c', issue.branchName);
  commitFile(r.repo, 'greeting.txt', 'hello\n');
  gitSync(r.repo, 'switch', '-q', 'main');
  return gitSync(r.repo, 'rev-parse', issue.branchName);
}

async function until(r: LinearE2E, issueId: string, status: string): Promise<DispatchRecord> {
  await waitFor(
    `dispatch of ${issueId} to be ${status} (is ${(await r.linear.pipeline.get(issueId))?.status})`,
    async () => (await r.linear.pipeline.get(issueId))?.status === status,
    90_000,
  );
  await r.linear.pipeline.idle();
  return (await r.linear.pipeline.get(issueId)) as DispatchRecord;
}

function responses(r: LinearE2E, agentSessionId: string): string[] {
  return r
    .activities(agentSessionId)
    .filter((a) => a.type === 'response')
    .map((a) => String(a.body));
}

function pullPosts(github: FakeGithub): number {
  return github.requests.filter((q) => q.method === 'POST' && /\/pulls$/.test(q.path)).length;
}

describe('Linear dispatches end in a pull request', { timeout: 120_000 }, () => {
  it('pass: branch pushed, one PR, attached to the issue, issue In Review, the response links it', async () => {
    const { r, github, remote } = await rig();
    const issue = greetingIssue(r);
    const head = branchWithWork(r, issue);
    const { payload, agentSessionId } = agentSessionCreated(r.ws, issue, '@switchboard please do this');
    assert.equal(await r.post(payload), 200);
    const d = await until(r, issue.id, 'done');

    assert.equal(gitSync(remote, 'rev-parse', `refs/heads/${d.branch}`), head, 'the branch is on the remote');
    assert.equal(github.pulls.length, 1);
    assert.equal(pullPosts(github), 1);
    const pull = github.pulls[0];
    assert.ok(pull);
    assert.equal(pull.title, 'OK-1: Add a greeting');
    assert.equal(pull.head, d.branch);
    assert.equal(pull.base, 'main');
    assert.match(pull.body, /### Summary/);
    assert.match(pull.body, /### Audit criteria\n\n- /);
    assert.match(pull.body, /### Test results/);
    assert.ok(pull.body.includes(String(d.context.issueUrl)), 'the body links the Linear issue');
    const url = `https://github.example/${REPO}/pull/1`;

    const attachments = [...r.ws.attachments.values()];
    assert.equal(attachments.length, 1);
    assert.equal(attachments[0]?.issueId, issue.id);
    assert.equal(attachments[0]?.url, url);
    assert.equal(r.ws.states.get(r.ws.issues.get(issue.id)?.stateId ?? '')?.name, 'In Review');

    const said = responses(r, agentSessionId);
    assert.equal(said.length, 1);
    assert.ok(said[0]?.includes(url), 'the response links the PR');
    assert.match(said[0] ?? '', /moved to \*\*In Review\*\*/);
    assert.ok(r.outbox.to(CHAT)[0]?.includes(url), 'the chat hears of the PR');
  });

  it('a team without a review state: the PR is opened and the issue left in its state, said so', async () => {
    const { r, github } = await rig();
    const issue = r.ws.addIssue({ teamId: r.teams.OK, title: 'No review', description: 'Say hello.', estimate: 1 });
    const before = r.ws.issues.get(issue.id)?.stateId;
    const { payload, agentSessionId } = agentSessionCreated(r.ws, issue, 'go');
    assert.equal(await r.post(payload), 200);
    await until(r, issue.id, 'done');
    assert.equal(github.pulls.length, 1);
    assert.equal(r.ws.issues.get(issue.id)?.stateId, before);
    assert.match(responses(r, agentSessionId)[0] ?? '', /no review state[\s\S]*left in its state/);
  });

  it('onPass done: no push, no PR, no attachment; the issue is Done as before', async () => {
    const { r, github, remote } = await rig({ 'linear.pipeline.onPass': 'done' });
    const issue = greetingIssue(r);
    branchWithWork(r, issue);
    const { payload, agentSessionId } = agentSessionCreated(r.ws, issue, 'go');
    assert.equal(await r.post(payload), 200);
    const d = await until(r, issue.id, 'done');
    assert.equal(github.pulls.length, 0);
    assert.equal(r.ws.attachments.size, 0);
    assert.equal(r.ws.states.get(r.ws.issues.get(issue.id)?.stateId ?? '')?.name, 'Done');
    assert.throws(() => gitSync(remote, 'rev-parse', '--verify', '--quiet', `refs/heads/${d.branch}`));
    const said = responses(r, agentSessionId);
    assert.equal(said.length, 1);
    assert.match(said[0] ?? '', /OK-1 is done/);
  });

  it('a PR opened before a crash cut off its record is found by its branch: no second PR, attached once', async () => {
    const { r, github } = await rig();
    const issue = greetingIssue(r);
    branchWithWork(r, issue);
    // What the crashed run left: the PR open on GitHub for the branch, nothing recorded here.
    github.pulls.push({
      number: 1,
      repo: REPO,
      title: 'OK-1: Add a greeting',
      body: 'opened before the crash',
      head: issue.branchName,
      base: 'main',
      draft: false,
      state: 'open',
    });
    const { payload, agentSessionId } = agentSessionCreated(r.ws, issue, 'go');
    assert.equal(await r.post(payload), 200);
    await until(r, issue.id, 'done');
    assert.equal(github.pulls.length, 1);
    assert.equal(pullPosts(github), 0, 'no PR was opened');
    const attachments = [...r.ws.attachments.values()];
    assert.equal(attachments.length, 1);
    assert.equal(attachments[0]?.url, `https://github.example/${REPO}/pull/1`);
    assert.equal(responses(r, agentSessionId).length, 1);
    assert.equal(r.ws.states.get(r.ws.issues.get(issue.id)?.stateId ?? '')?.name, 'In Review');
  });

  it('a push that cannot happen (no remote): the dispatch is stuck with why, no PR, the issue not moved', async () => {
    const { r, github } = await rig({}, { origin: false });
    const issue = greetingIssue(r);
    const before = r.ws.issues.get(issue.id)?.stateId;
    const { payload, agentSessionId } = agentSessionCreated(r.ws, issue, 'go');
    assert.equal(await r.post(payload), 200);
    const d = await until(r, issue.id, 'stuck');
    assert.match(d.lastError ?? '', /the audit passed, but the pull request could not be opened: .*no remote "origin"/);
    assert.equal(github.pulls.length, 0);
    assert.equal(r.ws.attachments.size, 0);
    assert.equal(r.ws.issues.get(issue.id)?.stateId, before);
    const errors = r.activities(agentSessionId).filter((a) => a.type === 'error');
    assert.equal(errors.length, 1);
    assert.match(String(errors[0]?.body), /pull request could not be opened/);
  });

  it('a follow-up after the PR: a new round pushes onto the same PR, attached once, a second response', async () => {
    const { r, github, remote } = await rig();
    const issue = greetingIssue(r);
    branchWithWork(r, issue);
    const { payload, agentSessionId } = agentSessionCreated(r.ws, issue, 'go');
    assert.equal(await r.post(payload), 200);
    const first = await until(r, issue.id, 'done');
    // The branch moves on in the worktree (as a worker's own commit would); then the person asks for more.
    const later = commitFile(first.worktreePath ?? '', 'more.txt', 'more\n');
    assert.equal(await r.post(agentSessionPrompted(r.ws, issue, agentSessionId, 'Also greet in French.')), 200);
    await waitFor('the second round to pass', async () => (await r.linear.pipeline.get(issue.id))?.attempt === 2);
    const second = await until(r, issue.id, 'done');
    assert.equal(second.attempt, 2);
    assert.equal(github.pulls.length, 1);
    assert.equal(pullPosts(github), 1);
    assert.equal(gitSync(remote, 'rev-parse', `refs/heads/${second.branch}`), later);
    assert.equal(r.ws.attachments.size, 1);
    assert.equal(responses(r, agentSessionId).length, 2);
  });
});
