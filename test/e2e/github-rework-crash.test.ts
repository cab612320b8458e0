// The review loop on the real daemon against the fake GitHub and a bare remote, with a SIGKILL between "answered on
// the PR" and "recorded done" (fault point `github.rework.after-comment`): after the restart the answer owed is found
// on GitHub by its marker and not posted again, and the review is not reworked twice.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { logLines, unexpectedErrors } from '../support/e2e-daemon.ts';
import { reviewPayload, sendGithubWebhook } from '../support/fake-github.ts';
import { gitSync } from '../support/git-repo.ts';
import { GITHUB_CRASH_SECRET, turnEnded, withGithubCrashRig } from '../support/github-crash-rig.ts';
import { waitFor } from '../support/wait-for.ts';

const LONG = 60_000;

describe('the review loop across a SIGKILL between answering on the PR and recording it', () => {
  it('answers once and pushes one rework commit', async () => {
    await withGithubCrashRig('sb-crash-github-rework-', async ({ rig, github, work, remote, env }) => {
      await rig.start({ ...env, SWITCHBOARD_FAULT: 'github.rework.after-comment' });
      await rig.daemon.rpc('sessions.launch', {
        prompt: 'Add a greeting [[write:hello.txt:hi]]',
        name: 'greet',
        workdir: work,
      });
      await turnEnded(rig, 'greet', LONG);
      await rig.daemon.rpc('sessions.pr', { session: 'greet' });
      const branch = 'switchboard/greet';
      const commitsBefore = gitSync(remote, 'rev-list', '--count', branch);
      github.addReviewComments(31, [
        { id: 1, path: 'hello.txt', line: 1, body: 'say hello [[write:hello.txt:hello]]' },
      ]);
      const review = reviewPayload('acme/widgets', 1, branch, 'changes_requested', { id: 31 });
      const hook = `${rig.daemon.url}/github/webhook`;
      assert.equal((await sendGithubWebhook(hook, GITHUB_CRASH_SECRET, 'pull_request_review', review)).status, 200);
      await rig.crashed('github.rework.after-comment');
      assert.equal(github.issueComments.length, 1, 'answered before the kill');

      await rig.start(env);
      const answered = () => logLines(rig.daemon.output()).filter((l) => l.msg === 'github: answered');
      await waitFor('the owed answer to be settled', () => answered().length > 0, LONG);
      await rig.stop();
      assert.equal(github.issueComments.length, 1, 'one answer in all');
      assert.match(github.issueComments[0]?.body ?? '', /hello\.txt:1 — say hello/);
      assert.equal(Number(gitSync(remote, 'rev-list', '--count', branch)), Number(commitsBefore) + 1);
      assert.equal(gitSync(remote, 'show', `${branch}:hello.txt`), 'hello');
      assert.deepEqual(unexpectedErrors(rig.runs[1]?.output() ?? ''), [], 'no error lines after the restart');
    });
  });
});
