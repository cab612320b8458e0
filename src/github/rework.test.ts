// The review loop and mentions end to end: the signed webhook on a real Fastify server, the durable queue in the test's
// database (a real SQLite file, or PostgreSQL with TEST_DATABASE=postgres), the fake GitHub REST API through Octokit, a
// bare repository as the remote, and the fake Claude CLI as the agent (its [[write:PATH:TEXT]] directive edits the
// working directory, so the rework has something to commit).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import Fastify from 'fastify';
import type { FakeGithub } from '../../test/support/fake-github.ts';
import {
  issueCommentPayload,
  reviewCommentPayload,
  reviewPayload,
  sendGithubWebhook,
  startFakeGithub,
} from '../../test/support/fake-github.ts';
import { addBareOrigin, gitSync, initRepo } from '../../test/support/git-repo.ts';
import type { StoreManagerParts } from '../../test/support/session-manager-on.ts';
import { sessionManagerOn } from '../../test/support/session-manager-on.ts';
import { tempDir } from '../../test/support/temp-dir.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import { waitFor } from '../../test/support/wait-for.ts';
import { systemClock } from '../core/clock.ts';
import { loadConfig } from '../core/config-load.ts';
import { silentLogger } from '../core/logger.ts';
import { registerGithubRoutes } from '../gateway/github-routes.ts';
import { GithubDeliveryStore } from '../store/github-deliveries.ts';
import { GithubReworkStore } from '../store/github-reworks.ts';
import type { GithubIntegration } from './integration.ts';
import { createGithubIntegration } from './integration.ts';
import { answerMarker } from './rework-prompt.ts';

const FAKE_CLAUDE = fileURLToPath(new URL('../../test/support/fake-claude.mjs', import.meta.url));
const SECRET = 'webhook-secret';
const REPO = 'acme/widgets';

describe('GitHub review loop and mentions', () => {
  let dir: ReturnType<typeof tempDir>;
  let github: FakeGithub;
  let parts: StoreManagerParts;
  let integration: GithubIntegration;
  let app: FastifyInstance;
  let url: string;
  let remote: string;
  let work: string;

  beforeEach(async () => {
    dir = tempDir('sb-github-rework-');
    github = await startFakeGithub();
    remote = join(dir.path, 'remote.git');
    work = initRepo(join(dir.path, 'widgets'));
    addBareOrigin(work, remote);
    const { config } = loadConfig({
      home: join(dir.path, 'home'),
      env: {},
      overrides: {
        workspaces: [dir.path],
        'harnesses.claude.executable': FAKE_CLAUDE,
        'harnesses.claude.settingSources': ['project'],
        github: { enabled: true, token: 'ghp_test', apiUrl: github.url, webhookSecret: SECRET, repo: REPO },
      },
    });
    const clock = systemClock();
    parts = await sessionManagerOn(dir.path, config, clock, (path) => openTestStore(path));
    integration = createGithubIntegration({
      config,
      env: {},
      db: parts.db,
      clock,
      logger: silentLogger(),
      sessions: parts.manager,
    });
    const webhook = integration.webhook;
    assert.ok(webhook && integration.rework);
    app = Fastify();
    await registerGithubRoutes(app, webhook);
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/github/webhook`;
    await integration.start();
  });

  afterEach(async () => {
    await app.close();
    await integration.stop();
    await parts.close();
    await github.close();
    dir.remove();
  });

  /** A finished session with a pull request opened from it (as session_pr opens it). */
  async function sessionWithPull(): Promise<{ id: string; branch: string; number: number }> {
    const session = await parts.manager.launch({
      prompt: 'add a greeting [[write:hello.txt:hi]]',
      workdir: work,
      originChannel: 'test',
      multiTurn: false,
    });
    await waitFor('the first turn to end', async () => (await parts.manager.get(session.id)).status === 'completed');
    const record = await parts.manager.get(session.id);
    const pr = await integration.pullRequests.open({
      session: { ...record, lastOutput: [], pageBase: undefined },
      workdir: work,
    });
    return { id: record.id, branch: pr.branch, number: pr.number };
  }

  const remoteLog = (branch: string) => gitSync(remote, 'log', '--format=%s', branch).split('\n');
  const deliveries = () => new GithubDeliveryStore(parts.db);

  it('a changes_requested review reworks the session once: its comments in the prompt, a new commit, one reply', async () => {
    const { branch, number } = await sessionWithPull();
    const before = remoteLog(branch);
    github.addReviewComments(77, [
      { id: 1, path: 'hello.txt', line: 1, body: 'say hello instead [[write:hello.txt:hello]]' },
    ]);
    const payload = reviewPayload(REPO, number, branch, 'changes_requested', { id: 77 });
    const first = await sendGithubWebhook(url, SECRET, 'pull_request_review', payload);
    assert.equal(first.status, 200);

    const reply = await waitFor('the reply on the PR', () => github.issueComments[0]);
    assert.equal(reply.issue, number);
    assert.ok(reply.body.includes(answerMarker('review:77')));
    assert.ok(reply.body.includes('hello.txt:1 — say hello instead'), 'the comment, with its file and line, was asked');
    assert.ok(reply.body.includes('please rename the function'), 'and the review body');
    const after = remoteLog(branch);
    assert.equal(after.length, before.length + 1, 'one new commit on the same branch');
    assert.equal(after[0], `Address review comments on #${number}`);
    assert.equal(gitSync(remote, 'show', `${branch}:hello.txt`), 'hello');
    assert.ok(reply.body.includes(gitSync(remote, 'rev-parse', '--short', branch)), 'the reply names the commit');
    const reworks = new GithubReworkStore(parts.db);
    const row = await waitFor('the rework to be done', async () => {
      const r = await reworks.get('review:77');
      return r?.state === 'done' && r;
    });
    assert.equal(row.answerId, reply.id);

    // Redelivered (a new delivery id, the same review): acknowledged, not reworked again.
    const again = await sendGithubWebhook(url, SECRET, 'pull_request_review', payload);
    assert.equal(again.status, 200);
    await waitFor(
      'the redelivery to be processed',
      async () => (await deliveries().get(again.deliveryId))?.status === 'done',
    );
    assert.equal((await deliveries().get(again.deliveryId))?.outcome, 'review:77: already done');
    assert.equal(github.issueComments.length, 1);
    assert.deepEqual(remoteLog(branch), after);

    // Forged: refused before anything is stored.
    const forged = await sendGithubWebhook(url, 'not-the-secret', 'pull_request_review', payload);
    assert.equal(forged.status, 401);
  });

  it('a lone review comment reworks too (its file and line in the prompt); an edit of it is ignored', async () => {
    const { branch, number } = await sessionWithPull();
    const comment = { id: 88, path: 'README.md', line: 1, body: 'a better title [[write:README.md:# widgets]]' };
    const edited = await sendGithubWebhook(
      url,
      SECRET,
      'pull_request_review_comment',
      reviewCommentPayload(REPO, number, branch, { ...comment, action: 'edited' }),
    );
    await waitFor('processed', async () => (await deliveries().get(edited.deliveryId))?.status === 'done');
    assert.equal((await deliveries().get(edited.deliveryId))?.outcome, 'ignored: review comment edited');
    await sendGithubWebhook(
      url,
      SECRET,
      'pull_request_review_comment',
      reviewCommentPayload(REPO, number, branch, comment),
    );
    const reply = await waitFor('the reply on the PR', () => github.issueComments[0]);
    assert.ok(reply.body.includes(answerMarker('comment:88')));
    assert.ok(reply.body.includes('README.md:1 — a better title'));
    assert.equal(gitSync(remote, 'show', `${branch}:README.md`), '# widgets');
  });

  it('ignores approvals, bots, and reviews of pull requests switchboard did not open', async () => {
    const { branch, number } = await sessionWithPull();
    const sent = [
      await sendGithubWebhook(url, SECRET, 'pull_request_review', reviewPayload(REPO, number, branch, 'approved')),
      await sendGithubWebhook(
        url,
        SECRET,
        'pull_request_review',
        reviewPayload(REPO, number, branch, 'changes_requested', { id: 5, author: 'switchboard[bot]', bot: true }),
      ),
      await sendGithubWebhook(
        url,
        SECRET,
        'pull_request_review',
        reviewPayload(REPO, 99, 'other', 'changes_requested'),
      ),
    ];
    for (const s of sent)
      await waitFor('processed', async () => (await deliveries().get(s.deliveryId))?.status === 'done');
    const outcomes = await Promise.all(sent.map(async (s) => (await deliveries().get(s.deliveryId))?.outcome));
    assert.deepEqual(outcomes, [
      'ignored: review submitted approved',
      'ignored: by switchboard[bot] (a bot)',
      `ignored: ${REPO}#99 was not opened by switchboard`,
    ]);
    assert.equal(github.issueComments.length, 0);
  });

  it('an @switchboard comment launches a session in the workspace that holds the repository and answers once', async () => {
    const payload = issueCommentPayload(REPO, 5, '@switchboard make it faster [[write:fast.txt:yes]]', { id: 501 });
    const first = await sendGithubWebhook(url, SECRET, 'issue_comment', payload);
    assert.equal(first.status, 200);
    const reply = await waitFor('the answer in the thread', () => github.issueComments[0]);
    assert.equal(reply.issue, 5);
    assert.ok(reply.body.includes(answerMarker('mention:501')));
    assert.ok(reply.body.includes('make it faster'), "the agent's last output");
    assert.ok(reply.body.includes('The login page is slow'), "the issue's title was in the prompt");
    assert.match(reply.body, /\$\d+\.\d\d/, 'its cost');
    assert.equal(readFileSync(join(work, 'fast.txt'), 'utf8'), 'yes\n', 'it ran in the clone of the repository');

    const again = await sendGithubWebhook(url, SECRET, 'issue_comment', payload);
    await waitFor(
      'the redelivery to be processed',
      async () => (await deliveries().get(again.deliveryId))?.status === 'done',
    );
    assert.equal(github.issueComments.length, 1);
    assert.equal((await parts.manager.list()).length, 1, 'one session');

    // A comment by someone without access to the repository is not acted on.
    const outsider = issueCommentPayload(REPO, 5, '@switchboard delete everything', { id: 502, association: 'NONE' });
    const o = await sendGithubWebhook(url, SECRET, 'issue_comment', outsider);
    await waitFor('processed', async () => (await deliveries().get(o.deliveryId))?.status === 'done');
    assert.match((await deliveries().get(o.deliveryId))?.outcome ?? '', /not a collaborator/);
  });

  it('answers in the thread when no workspace holds the repository', async () => {
    const payload = issueCommentPayload('acme/elsewhere', 3, 'hey @SwitchBoard, look', { id: 601 });
    // github.repo names every clone acme/widgets here, so acme/elsewhere is in none.
    await sendGithubWebhook(url, SECRET, 'issue_comment', payload);
    const reply = await waitFor('the answer', () => github.issueComments[0]);
    assert.equal(reply.repo, 'acme/elsewhere');
    assert.match(reply.body, /no workspace holds a clone of acme\/elsewhere/);
  });

  it('after a restart, an answer owed is posted once: one already on GitHub is found, not posted again', async () => {
    const store = new GithubReworkStore(parts.db);
    await store.claim({
      key: 'mention:700',
      kind: 'mention',
      repo: REPO,
      number: 8,
      sessionId: null,
      prompt: 'p',
      now: 1,
    });
    await store.set('mention:700', { state: 'finishing', error: 'cut off' }, 2);
    github.issueComments.push({ id: 42, repo: REPO, issue: 8, body: `${answerMarker('mention:700')}\nalready here` });
    await integration.rework?.start();
    await waitFor('the row to be finished', async () => (await store.get('mention:700'))?.state === 'failed');
    assert.equal((await store.get('mention:700'))?.answerId, 42);
    assert.equal(github.issueComments.length, 1);
  });
});
