// The real daemon with Linear and GitHub, SIGKILLed while a passed dispatch delivers its pull request — at
// `github.pr.after-open` (the PR is open on GitHub, nothing recorded yet) or `linear.effect.after-send:attachment` (the
// attachment is in Linear, not marked done) — then started again: recovery runs the pass again, finds the PR by its
// branch and opens no second one; the issue has the attachment once, the review state and one response linking the PR.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { FAULT_ENV } from '../../src/core/fault.ts';
import type { DaemonProcess } from '../support/daemon-process.ts';
import { killDaemonProcess, startDaemonProcess } from '../support/daemon-process.ts';
import { unexpectedErrors } from '../support/e2e-daemon.ts';
import type { FakeGithub } from '../support/fake-github.ts';
import { startFakeGithub } from '../support/fake-github.ts';
import type { FakeLinear } from '../support/fake-linear.ts';
import { startFakeLinear } from '../support/fake-linear.ts';
import { addBareOrigin, gitSync } from '../support/git-repo.ts';
import { addTeam, agentSessionCreated, linearDaemonConfig, postWebhook, replayRepo } from '../support/linear-e2e.ts';
import { tempDir } from '../support/temp-dir.ts';
import { waitFor } from '../support/wait-for.ts';

describe('a Linear pull request across a SIGKILL between "PR opened" and "recorded"', { timeout: 180_000 }, () => {
  const dir = tempDir('sb-linear-pr-crash-');
  let fake: FakeLinear;
  let github: FakeGithub;
  let team: string;
  const daemons: DaemonProcess[] = [];

  before(async () => {
    fake = await startFakeLinear();
    github = await startFakeGithub();
    team = addTeam(fake.workspace, 'OK');
    const review = fake.workspace.newId();
    fake.workspace.states.set(review, { id: review, name: 'In Review', type: 'started', teamId: team });
  });
  afterEach(async () => {
    for (const d of daemons.splice(0)) await killDaemonProcess(d);
  });
  after(async () => {
    await github.close();
    await fake.close();
    dir.remove();
  });

  let n = 0;

  async function killedAt(step: string): Promise<void> {
    n += 1;
    const REPO = `acme/app-${n}`;
    const pullPosts = () =>
      github.requests.filter((q) => q.method === 'POST' && q.path === `/repos/${REPO}/pulls`).length;
    const pulls = () => github.pulls.filter((p) => p.repo === REPO);
    const home = join(dir.path, `home-${n}`);
    mkdirSync(home, { recursive: true });
    const repo = replayRepo(join(dir.path, `repo-${n}`));
    const remote = join(dir.path, `remote-${n}.git`);
    addBareOrigin(repo, remote);
    const config = {
      ...linearDaemonConfig({
        dir: dir.path,
        repo,
        linearUrl: fake.graphqlUrl,
        agentLog: join(dir.path, `agents-${n}.jsonl`),
        originChannel: 'linear',
      }),
      github: { enabled: true, token: 'ghp_test', apiUrl: github.url, repo: REPO },
      log: { level: 'warn' },
    };
    writeFileSync(join(home, 'config.json5'), JSON.stringify(config));

    const first = await startDaemonProcess(home, { [FAULT_ENV]: step });
    daemons.push(first);
    const issue = fake.workspace.addIssue({
      teamId: team,
      title: 'Add a greeting',
      description: 'Add a greeting to the README.',
      estimate: 1,
    });
    const { payload, agentSessionId } = agentSessionCreated(fake.workspace, issue, '@switchboard please do this');
    assert.equal(await postWebhook(first.url, payload), 200);
    const exit = await first.exited();
    assert.equal(exit.signal, 'SIGKILL', first.output());
    assert.ok(first.output().includes(`fault injected at ${step}`), first.output());
    assert.equal(pulls().length, 1, 'the PR was opened before the kill');
    const attachmentsOf = () => [...fake.workspace.attachments.values()].filter((a) => a.issueId === issue.id);
    assert.equal(attachmentsOf().length, step === 'github.pr.after-open' ? 0 : 1);

    const second = await startDaemonProcess(home);
    daemons.push(second);
    const responses = () =>
      (fake.workspace.agentSessions.get(agentSessionId)?.activities ?? [])
        .map((a) => a.content)
        .filter((c) => c.type === 'response')
        .map((c) => String(c.body));
    await waitFor('the response after the restart', async () => responses().length > 0, 60_000);
    const url = `https://github.example/${REPO}/pull/${pulls()[0]?.number ?? 0}`;
    assert.equal(pulls().length, 1);
    assert.equal(pullPosts(), 1, 'no second PR was asked for');
    assert.equal(gitSync(remote, 'rev-parse', `refs/heads/${issue.branchName}`), gitSync(repo, 'rev-parse', 'main'));
    const attachments = attachmentsOf();
    assert.equal(attachments.length, 1);
    assert.equal(attachments[0]?.url, url);
    assert.equal(responses().length, 1);
    assert.ok(responses()[0]?.includes(url));
    const state = fake.workspace.issues.get(issue.id)?.stateId;
    assert.equal(fake.workspace.states.get(state ?? '')?.name, 'In Review');
    second.child.kill('SIGTERM');
    assert.equal((await second.exited()).code, 0, second.output());
    assert.deepEqual(unexpectedErrors(second.output()), []);
  }

  it('killed after the PR was opened, before it was recorded: one PR, attached once, one response', async () => {
    await killedAt('github.pr.after-open');
  });

  it('killed after the attachment reached Linear, before it was marked done: still one of each', async () => {
    await killedAt('linear.effect.after-send:attachment');
  });
});
