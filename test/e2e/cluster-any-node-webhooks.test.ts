// Webhooks sent to a node of a cluster that does not serve them (two daemon processes on one PostgreSQL, as behind a
// load balancer): a signed Linear webhook, a GitHub webhook and a Slack Events API request (http mode) posted to a
// node that does not hold the lease of their worker are acknowledged once committed, and processed once by the holder
// (the Slack message answered once by the orchestrator, through the holder's outbox).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ClusterRig } from '../support/cluster-rig.ts';
import { startClusterRig } from '../support/cluster-rig.ts';
import { chatInference } from '../support/e2e-daemon.ts';
import type { FakeGithub } from '../support/fake-github.ts';
import { issueCommentPayload, sendGithubWebhook, startFakeGithub } from '../support/fake-github.ts';
import type { FakeLinear } from '../support/fake-linear.ts';
import { startFakeLinear } from '../support/fake-linear.ts';
import type { FakeSlack } from '../support/fake-slack.ts';
import { startFakeSlack } from '../support/fake-slack.ts';
import { eventCallback, messageEvent, postSigned } from '../support/fake-slack-payloads.ts';
import { postWebhook } from '../support/linear-e2e.ts';
import { linearFixture, TEST_WEBHOOK_SECRET } from '../support/linear-webhook-fixtures.ts';
import type { MockOpenAIChat } from '../support/mock-openai-chat.ts';
import { chatText, lastUserText, startMockOpenAIChat } from '../support/mock-openai-chat.ts';
import { postgresSkip } from '../support/postgres.ts';
import { waitFor } from '../support/wait-for.ts';

const LONG = 60_000;
const GITHUB_SECRET = 'github-any-node-secret';
const SLACK_SECRET = 'slack-any-node-signing-secret';
const SLACK_USER = 'UANYNODE';

describe('webhooks on a node that does not serve them', { skip: postgresSkip() }, () => {
  let rig: ClusterRig | undefined;
  let model: MockOpenAIChat | undefined;
  let linear: FakeLinear | undefined;
  let github: FakeGithub | undefined;
  let slack: FakeSlack | undefined;
  const cluster = (): ClusterRig => {
    if (!rig) throw new Error('the rig did not start');
    return rig;
  };

  /** A running node that does not hold lease `name`. */
  async function notHolding(name: string): Promise<{ url: string; name: string }> {
    const row = await cluster()
      .db.selectFrom('cluster_leases')
      .select('holder')
      .where('name', '=', name)
      .executeTakeFirst();
    assert.ok(row, `somebody holds ${name}`);
    const other = cluster()
      .up()
      .find((node) => node !== row.holder);
    assert.ok(other, `a node that does not hold ${name}`);
    return { url: cluster().node(other).url, name: other };
  }

  before(async () => {
    model = await startMockOpenAIChat({ handler: (body) => chatText(`answer to: ${lastUserText(body)}`) });
    linear = await startFakeLinear();
    github = await startFakeGithub();
    slack = await startFakeSlack();
    rig = await startClusterRig('sb-cluster-webhooks-', [{ name: 'alpha' }, { name: 'beta' }], {
      config: {
        inference: chatInference(model.url),
        heartbeat: { intervalMinutes: 0 },
        linear: {
          enabled: true,
          apiUrl: linear.graphqlUrl,
          apiKey: 'lin_api_fake',
          webhookSecret: TEST_WEBHOOK_SECRET,
          triage: { enabled: false },
        },
        github: {
          enabled: true,
          apiUrl: github.url,
          repo: 'acme/widgets',
          token: 'ghp_any_node_token',
          webhookSecret: GITHUB_SECRET,
        },
        channels: {
          web: { enabled: false },
          slack: {
            enabled: true,
            mode: 'http',
            botToken: slack.botToken,
            signingSecret: SLACK_SECRET,
            apiUrl: slack.apiUrl,
            allowedUserIds: [SLACK_USER],
          },
        },
      },
    });
  });

  after(async () => {
    await rig?.stop();
    await model?.close();
    await linear?.close();
    await github?.close();
    await slack?.close();
  });

  it('takes a signed Linear webhook and has it processed once by the holder', async () => {
    const node = await notHolding('primary');
    const deliveryId = 'd0c5a1e0-0000-4000-8000-00000000a001';
    assert.equal(await postWebhook(node.url, linearFixture('issue-create'), deliveryId), 200);
    // Acknowledged once committed: the row is there at once.
    const stored = await cluster()
      .db.selectFrom('linear_webhook_deliveries')
      .select(['status', 'attempts'])
      .where('delivery_id', '=', deliveryId)
      .execute();
    assert.equal(stored.length, 1, 'the delivery is stored when acknowledged');
    await waitFor(
      'the holder to process the Linear delivery',
      async () => {
        const row = await cluster()
          .db.selectFrom('linear_webhook_deliveries')
          .select(['status', 'attempts'])
          .where('delivery_id', '=', deliveryId)
          .executeTakeFirst();
        return row?.status === 'done' ? row : undefined;
      },
      LONG,
    ).then((row) => assert.equal(row.attempts, 1, 'processed once'));
    // A redelivery to the other node is recognised: still one row.
    const holderUrl = cluster()
      .up()
      .filter((name) => name !== node.name)
      .map((name) => cluster().node(name).url)[0];
    assert.ok(holderUrl);
    assert.equal(await postWebhook(holderUrl, linearFixture('issue-create'), deliveryId), 200);
    const rows = await cluster()
      .db.selectFrom('linear_webhook_deliveries')
      .select('status')
      .where('delivery_id', '=', deliveryId)
      .execute();
    assert.deepEqual(rows, [{ status: 'done' }]);
  });

  it('takes a GitHub webhook and has it processed once by the holder of `github`', async () => {
    const node = await notHolding('github');
    const sent = await sendGithubWebhook(
      `${node.url}/github/webhook`,
      GITHUB_SECRET,
      'issue_comment',
      issueCommentPayload('acme/widgets', 7, 'Nothing for the bot here.'),
    );
    assert.equal(sent.status, 200, sent.text);
    const row = await waitFor(
      'the holder to process the GitHub delivery',
      async () => {
        const found = await cluster()
          .db.selectFrom('github_webhook_deliveries')
          .select(['status', 'attempts'])
          .where('delivery_id', '=', sent.deliveryId)
          .executeTakeFirst();
        return found?.status === 'done' ? found : undefined;
      },
      LONG,
    );
    assert.equal(row.attempts, 1, 'processed once');
  });

  it('takes a Slack Events API message and has the orchestrator answer it once', async () => {
    const fake = slack as FakeSlack;
    const node = await notHolding('primary');
    const event = eventCallback(
      messageEvent({ user: SLACK_USER, text: 'hello over http' }, '1700000000.000100'),
      'Ev01ANYNODE',
    );
    const posted = await postSigned(`${node.url}/slack/events`, SLACK_SECRET, { kind: 'event', body: event });
    assert.equal(posted.status, 200, posted.body);
    const answered = (): string[] =>
      fake.posts.filter((p) => p.text === 'answer to: hello over http').map((p) => p.text);
    await waitFor('the answer in Slack', () => (answered().length > 0 ? true : undefined), LONG);
    // Slack repeating the event (it did not see the 200 in time) to the other node: not answered again.
    const holder = cluster()
      .up()
      .find((name) => name !== node.name);
    assert.ok(holder);
    const again = await postSigned(
      `${cluster().node(holder).url}/slack/events`,
      SLACK_SECRET,
      {
        kind: 'event',
        body: event,
      },
      { retryNum: 1 },
    );
    assert.equal(again.status, 200, again.body);
    // The 200 comes after the engine accepted (or recognised) it: a second acceptance would be queued or running now.
    // Asked on the node that does not serve the engine: the listing is the holder's.
    type Listed = { sessions: { descriptor: { type: string; channelId?: string }; state: string; queued: number }[] };
    const { sessions } = await cluster().node(node.name).rpc<Listed>('engine.sessions');
    const dm = sessions.find((s) => s.descriptor.type === 'user' && s.descriptor.channelId?.includes(SLACK_USER));
    assert.ok(dm, `the DM's engine session is listed: ${JSON.stringify(sessions)}`);
    assert.equal(dm.queued, 0, 'the redelivery queued nothing');
    assert.equal(dm.state, 'idle', 'and started no turn');
    const turns = (): number =>
      (model?.completionRequests() ?? []).filter((r) => JSON.stringify(r.body).includes('hello over http')).length;
    assert.equal(turns(), 1, 'one turn for the message');
    assert.deepEqual(answered(), ['answer to: hello over http']);
  });
});
