import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { GithubDeliveryStore } from './github-deliveries.ts';
import { SessionPullRequestStore } from './github-pull-requests.ts';

describeEachDatabase('GitHub stores', (fresh) => {
  it('records a session PR pending, keeps the first branch, then opened', async () => {
    const store = new SessionPullRequestStore((await fresh()).db);
    const base = { sessionId: 's1', repo: 'acme/widgets', base: 'main', now: 10 };
    const first = await store.begin({ ...base, branch: 'switchboard/one', branchCreated: true });
    assert.equal(first.state, 'pending');
    const again = await store.begin({ ...base, branch: 'other', branchCreated: false, now: 20 });
    assert.equal(again.branch, 'switchboard/one', 'the first record stays');
    assert.equal(again.branchCreated, true);
    await store.opened('s1', { number: 12, url: 'https://x/pull/12' }, 30);
    const opened = await store.get('s1');
    assert.equal(opened?.state, 'opened');
    assert.equal(opened?.number, 12);
    assert.equal(opened?.updatedAt, 30);
  });

  it('stores a delivery once, claims it, retries, completes and recovers interrupted ones', async () => {
    const store = new GithubDeliveryStore((await fresh()).db);
    const d = { deliveryId: 'd1', event: 'issue_comment', action: 'created', payload: '{}', receivedAt: 100 };
    assert.equal(await store.enqueue(d), true);
    assert.equal(await store.enqueue({ ...d, payload: '{"other":1}' }), false, 'a redelivery is not stored again');
    const claimed = await store.claimNext(100);
    assert.equal(claimed?.attempts, 1);
    assert.equal(await store.claimNext(100), undefined, 'processing is not claimed twice');
    await store.fail('d1', 'boom', 101, 500);
    assert.equal(await store.claimNext(200), undefined);
    assert.equal(await store.nextDueAfter(200), 500);
    assert.equal((await store.claimNext(500))?.attempts, 2);
    assert.equal(await store.recoverInterrupted(600), 1);
    assert.equal((await store.claimNext(600))?.attempts, 3);
    await store.complete('d1', 'recorded', 700);
    const done = await store.get('d1');
    assert.equal(done?.status, 'done');
    assert.equal(done?.outcome, 'recorded');
    assert.equal(done?.payload, '{}');
    assert.equal(await store.prune(700), 0, 'kept until after its last change');
    assert.equal(await store.prune(701), 1);
    assert.equal(await store.get('d1'), undefined);
  });
});
