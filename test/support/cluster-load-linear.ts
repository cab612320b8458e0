// The Linear side of a mixed load on a cluster: the `linear` config section every node gets (the fake Linear server,
// the test signing secret), and signed Comment deliveries (a cheap kind: a comment that addresses nobody) posted to a
// node; a delivery the node did not answer 200 is posted again, with the same bytes and delivery id, maybe elsewhere.
import type { ClusterRig } from './cluster-rig.ts';
import type { FakeLinear } from './fake-linear.ts';
import { FAKE_IDS } from './fake-linear.ts';
import type { SignedDelivery } from './linear-webhook-fixtures.ts';
import { linearFixture, signLinearWebhook, TEST_WEBHOOK_SECRET } from './linear-webhook-fixtures.ts';

/** `linear` for every node: the fake at `fake`, quick retries. */
export function linearSection(fake: FakeLinear): Record<string, unknown> {
  return {
    enabled: true,
    apiUrl: fake.graphqlUrl,
    apiKey: 'lin_api_fake',
    webhookSecret: TEST_WEBHOOK_SECRET,
    requests: { backoffInitialMs: 10, backoffMaxMs: 100, maxAttempts: 3 },
    webhooks: { retryInitialMs: 200, retryMaxMs: 1_000 },
    router: { retryInitialSec: 1 },
  };
}

/** A signed delivery of a new comment `body` on the fake workspace's first issue (a new comment id each call). */
export function commentDelivery(fake: FakeLinear, body: string): SignedDelivery {
  const ws = fake.workspace;
  const issue = [...ws.issues.values()][0];
  if (!issue) throw new Error('the fake Linear workspace has no issue');
  const comment = ws.addComment(issue.id, body, FAKE_IDS.human);
  const payload = linearFixture('comment-create-mention');
  const data = payload.data as Record<string, unknown>;
  payload.data = {
    ...data,
    id: comment.id,
    body,
    issueId: issue.id,
    issue: { ...(data.issue as Record<string, unknown>), id: issue.id, identifier: issue.identifier },
  };
  return signLinearWebhook(payload);
}

/** POSTs `delivery` to `node`'s /linear/webhook; true on 200 (throws when unanswered). */
export async function deliverOn(rig: ClusterRig, node: string, delivery: SignedDelivery): Promise<true | undefined> {
  const res = await fetch(`${rig.node(node).url}/linear/webhook`, {
    method: 'POST',
    headers: delivery.headers,
    body: delivery.body,
  });
  await res.text();
  return res.status === 200 ? true : undefined;
}
