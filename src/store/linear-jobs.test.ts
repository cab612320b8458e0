import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { LinearJobStore } from './linear-jobs.ts';

describeEachDatabase('LinearJobStore', (fresh) => {
  it('enqueues a key once and claims due jobs in order, one per serial key, none behind a running one', async () => {
    const jobs = new LinearJobStore((await fresh()).db);
    const first = await jobs.enqueue({ key: 'a', kind: 'work', serialKey: 's1', payload: { n: 1 } }, 10);
    assert.equal(first.created, true);
    assert.deepEqual(first.job.payload, { n: 1 });
    assert.equal(
      (await jobs.enqueue({ key: 'a', kind: 'work', serialKey: 's1', payload: { n: 9 } }, 11)).created,
      false,
    );
    await jobs.enqueue({ key: 'b', kind: 'work', serialKey: 's1', payload: {} }, 10);
    await jobs.enqueue({ key: 'c', kind: 'other', serialKey: 's2', payload: {}, agentSessionId: 'as-1' }, 10);
    await jobs.enqueue({ key: 'later', kind: 'work', serialKey: 's3', payload: {}, runAt: 100 }, 10);
    const claimed = await jobs.claimDue(20, 10);
    assert.deepEqual(
      claimed.map((j) => [j.key, j.status, j.attempts]),
      [
        ['a', 'running', 1],
        ['c', 'running', 1],
      ],
    );
    assert.deepEqual(await jobs.claimDue(20, 10), [], 'b waits behind a; later is not due');
    assert.equal(await jobs.hasDue(20), true, 'b is queued and due (behind a)');
    assert.equal(await jobs.nextDueAfter(20), 100);
    assert.equal(await jobs.hasOpen('s2', 'other'), true);
    assert.deepEqual(
      (await jobs.cancelForSession('as-1', 21)).map((j) => j.key),
      ['c'],
    );
    assert.equal(await jobs.hasOpen('s2', 'other'), false);
    assert.equal(await jobs.finish(claimed[1]?.seq ?? 0, 'done', null, 22), false, 'c was cancelled meanwhile');
    assert.equal(await jobs.retry(claimed[0]?.seq ?? 0, 'busy', 30, 22), true);
    assert.deepEqual(
      (await jobs.claimDue(30, 10)).map((j) => [j.key, j.attempts]),
      [['a', 2]],
    );
    assert.equal(await jobs.recoverInterrupted(31), 1);
    const again = await jobs.claimDue(31, 1);
    assert.equal(again[0]?.key, 'a');
    assert.equal(await jobs.finish(again[0]?.seq ?? 0, 'done', null, 32), true);
    assert.deepEqual(
      (await jobs.list(['done', 'cancelled'])).map((j) => j.key),
      ['a', 'c'],
    );
    assert.deepEqual(
      (await jobs.list()).map((j) => j.key),
      ['a', 'b', 'c', 'later'],
    );
    assert.equal(await jobs.prune(33), 2);
    assert.equal(await jobs.get('a'), null);
    assert.equal((await jobs.get('b'))?.status, 'queued');
  });
});
