// The review loop on the real daemon against the fake GitHub and a bare remote, with a SIGKILL between "answered on
// the PR" and "recorded done" (fault point `github.rework.after-comment`): after the restart the answer owed is found
// on GitHub by its marker and not posted again, and the review is not reworked twice.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { withCrashRig } from '../support/crash-rig.ts';
import { logLines, unexpectedErrors } from '../support/e2e-daemon.ts';
import { reviewPayload, sendGithubWebhook, startFakeGithub } from '../support/fake-github.ts';
import { addBareOrigin, gitSync, initRepo } from '../support/git-repo.ts';
import { chatText } from '../support/mock-openai-chat.ts';
import { waitFor } from '../support/wait-for.ts';

const LONG = 60_000;
const FAKE_CLAUDE = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));
const SECRET = 'github-webhook-secret';

describe('the review loop across a SIGKILL between answering on the PR and recording it', () => {
  it('answers once and pushes one rework commit', async () => {
    const github = await startFakeGithub();
    try {
      await withCrashRig(
        'sb-crash-github-rework-',
        () => chatText('unused'),
        {},
        async (rig) => {
          const remote = join(rig.root, 'remote.git');
          const work = initRepo(join(rig.root, 'work'));
          addBareOrigin(work, remote);
          rig.configure({
            harnesses: { claude: { executable: FAKE_CLAUDE } },
            github: { enabled: true, apiUrl: github.url, repo: 'acme/widgets', webhookSecret: SECRET },
          });
          const env = { GITHUB_TOKEN: 'ghp_crash_test_token' };
          await rig.start({ ...env, SWITCHBOARD_FAULT: 'github.rework.after-comment' });
          await rig.daemon.rpc('sessions.launch', {
            prompt: 'Add a greeting [[write:hello.txt:hi]]',
            name: 'greet',
            workdir: work,
          });
          await waitFor(
            'the agent to end its turn',
            async () => {
              const s = await rig.daemon.rpc<{ status: string; waitingFor: string | null }>('sessions.get', {
                session: 'greet',
              });
              return s.waitingFor === 'turn-end' || s.status === 'completed';
            },
            LONG,
          );
          await rig.daemon.rpc('sessions.pr', { session: 'greet' });
          const branch = 'switchboard/greet';
          const commitsBefore = gitSync(remote, 'rev-list', '--count', branch);
          github.addReviewComments(31, [
            { id: 1, path: 'hello.txt', line: 1, body: 'say hello [[write:hello.txt:hello]]' },
          ]);
          const review = reviewPayload('acme/widgets', 1, branch, 'changes_requested', { id: 31 });
          const hook = `${rig.daemon.url}/github/webhook`;
          assert.equal((await sendGithubWebhook(hook, SECRET, 'pull_request_review', review)).status, 200);
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
        },
      );
    } finally {
      await github.close();
    }
  });
});
