// session_pr on the real daemon against the fake GitHub and a bare remote, with a SIGKILL between "PR opened" and
// "recorded" (fault point `github.pr.after-open`): the repeat after the restart finds the PR by its head branch and
// records it; no second PR is opened. The same daemon takes a signed review webhook once (the session's rework turn
// answers on the PR once) and refuses a forged one.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { unexpectedErrors } from '../support/e2e-daemon.ts';
import { reviewPayload, sendGithubWebhook } from '../support/fake-github.ts';
import { gitSync } from '../support/git-repo.ts';
import { GITHUB_CRASH_SECRET, turnEnded, withGithubCrashRig } from '../support/github-crash-rig.ts';
import { waitFor } from '../support/wait-for.ts';

const LONG = 60_000;

interface Pr {
  number: number;
  url: string;
  branch: string;
  outcome: string;
}

describe('session_pr across a SIGKILL between opening the PR and recording it', () => {
  it('opens one PR: the repeat after the restart finds it by its branch, and a further repeat answers it too', async () => {
    await withGithubCrashRig('sb-crash-github-pr-', async ({ rig, github, work, remote, env }) => {
      await rig.start({ ...env, SWITCHBOARD_FAULT: 'github.pr.after-open' });
      await rig.daemon.rpc('sessions.launch', { prompt: 'Fix the login bug', name: 'fix-login', workdir: work });
      await turnEnded(rig, 'fix-login', LONG);
      mkdirSync(join(work, 'src'), { recursive: true });
      writeFileSync(join(work, 'src', 'login.ts'), 'export const renewed = true;\n');

      const lost = await rig.daemon.rpc('sessions.pr', { session: 'fix-login' }).catch((e: unknown) => e);
      assert.ok(lost instanceof Error, 'the first request got no answer');
      await rig.crashed('github.pr.after-open');
      assert.equal(github.pulls.length, 1, 'the PR was opened before the kill');

      await rig.start(env);
      const repeat = await rig.daemon.rpc<Pr>('sessions.pr', { session: 'fix-login' });
      assert.equal(repeat.outcome, 'found');
      assert.equal(repeat.number, 1);
      assert.equal(repeat.branch, 'switchboard/fix-login');
      const again = await rig.daemon.rpc<Pr>('sessions.pr', { session: 'fix-login' });
      assert.equal(again.outcome, 'existing');
      assert.equal(again.url, repeat.url);
      assert.equal(github.pulls.length, 1, 'one PR in all');
      assert.equal(github.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/pulls')).length, 1);
      assert.equal(github.pulls[0]?.title, 'Fix the login bug');
      assert.match(github.pulls[0]?.body ?? '', /### What the agent said last\n\n\S/);
      assert.equal(gitSync(remote, 'show', 'switchboard/fix-login:src/login.ts'), 'export const renewed = true;');

      // The webhook: a forged delivery is refused, a signed one is taken in once.
      const hook = `${rig.daemon.url}/github/webhook`;
      const review = reviewPayload('acme/widgets', 1, 'switchboard/fix-login');
      assert.equal((await sendGithubWebhook(hook, 'forged', 'pull_request_review', review)).status, 401);
      const sent = await sendGithubWebhook(hook, GITHUB_CRASH_SECRET, 'pull_request_review', review, {
        deliveryId: 'gh-1',
      });
      assert.equal(sent.status, 200);
      assert.equal(
        (await sendGithubWebhook(hook, GITHUB_CRASH_SECRET, 'pull_request_review', review, { deliveryId: 'gh-1' }))
          .status,
        200,
      );
      // The review (changes requested on the session's PR) gives the session a rework turn, answered once.
      await waitFor('the rework to answer on the PR', () => github.issueComments.length > 0, LONG);
      await rig.stop();
      assert.equal(github.issueComments.length, 1, 'processed once');
      assert.equal(github.issueComments[0]?.issue, 1);
      assert.deepEqual(unexpectedErrors(rig.runs[1]?.output() ?? ''), [], 'no error lines after the restart');
    });
  });
});
