// The command queue for sessions on other nodes, on SQLite and on PostgreSQL: FIFO per target, claimed once (also by
// concurrent claimers on PostgreSQL), finished only by the incarnation that claimed it, abandoned only while queued,
// and failed on takeover (a lost node's, or the ones a restarted node's previous run claimed).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { ClusterCommandStore } from './cluster-commands.ts';

const lost = { kind: 'unavailable', message: 'node b is down' } as const;

describeEachDatabase('ClusterCommandStore', (fresh) => {
  test('runs each target’s commands oldest first, once, answered by the incarnation that claimed them', async () => {
    const store = new ClusterCommandStore((await fresh()).db);
    await store.submit({ id: 'c1', target: 'b', kind: 'kill', payload: { session: 's1' } }, 1);
    await store.submit({ id: 'c2', target: 'c', kind: 'respond', payload: { session: 's2' } }, 2);
    await store.submit({ id: 'c3', target: 'b', kind: 'respond', payload: { session: 's3', message: 'hi' } }, 3);
    const first = await store.claimNext('b', 'inc-1', 10);
    assert.deepEqual(
      [first?.id, first?.status, first?.claimedBy, first?.payload],
      ['c1', 'running', 'inc-1', { session: 's1' }],
    );
    assert.equal(await store.finish('c1', 'inc-other', { ok: true, result: 1 }, 11), false);
    assert.equal(await store.finish('c1', 'inc-1', { ok: true, result: { killed: true } }, 11), true);
    assert.equal(await store.finish('c1', 'inc-1', { ok: true, result: 2 }, 12), false, 'finished once');
    const done = await store.get('c1');
    assert.deepEqual([done?.status, done?.result, done?.finishedAt], ['done', { killed: true }, 11]);
    const second = await store.claimNext('b', 'inc-1', 13);
    assert.equal(second?.id, 'c3');
    await store.finish('c3', 'inc-1', { ok: false, error: { kind: 'conflict', message: 'ended' } }, 14);
    assert.deepEqual((await store.get('c3'))?.error, { kind: 'conflict', message: 'ended' });
    assert.equal(await store.claimNext('b', 'inc-1', 15), null);
    assert.equal((await store.claimNext('c', 'inc-9', 15))?.id, 'c2');
  });

  test('a caller abandons only a queued command; a lost or restarted node’s unfinished ones fail', async () => {
    const store = new ClusterCommandStore((await fresh()).db);
    for (const id of ['c1', 'c2', 'c3']) await store.submit({ id, target: 'b', kind: 'kill', payload: {} }, 1);
    assert.equal((await store.claimNext('b', 'old', 2))?.id, 'c1');
    assert.equal(await store.abandon('c1', lost, 3), false, 'running: the caller cannot take it back');
    assert.equal(await store.abandon('c2', lost, 3), true);
    assert.equal((await store.get('c2'))?.status, 'failed');
    // b restarts: what its old incarnation claimed fails; what is queued still runs.
    assert.deepEqual(await store.failTarget('b', lost, 4, { exceptIncarnation: 'new' }), ['c1']);
    assert.equal(await store.finish('c1', 'old', { ok: true, result: null }, 5), false, 'never answered twice');
    assert.equal((await store.get('c3'))?.status, 'queued');
    // b is lost: everything unfinished fails.
    assert.deepEqual(await store.failTarget('b', lost, 6), ['c3']);
    assert.deepEqual((await store.get('c3'))?.error, lost);
    assert.equal(await store.claimNext('b', 'new', 7), null);
    assert.equal(await store.prune(6), 2, 'c1 and c2 finished before 6');
    assert.equal(await store.get('c1'), null);
    assert.equal((await store.get('c3'))?.status, 'failed');
  });

  test('concurrent claimers take each command once', async () => {
    const store = new ClusterCommandStore((await fresh()).db);
    for (let i = 0; i < 30; i++)
      await store.submit({ id: `c${String(i).padStart(2, '0')}`, target: 'b', kind: 'kill', payload: {} }, i);
    const claimers = ['x', 'y', 'z'].map(async (incarnation) => {
      const mine: string[] = [];
      for (let c = await store.claimNext('b', incarnation, 100); c; c = await store.claimNext('b', incarnation, 100))
        mine.push(c.id);
      return mine;
    });
    const all = (await Promise.all(claimers)).flat();
    assert.equal(all.length, 30);
    assert.equal(new Set(all).size, 30);
  });
});
