// Placement of Linear dispatches on the nodes of a cluster, in the store: a claim takes only a dispatch the node can run
// (repository in its workspaces, both harnesses), under the cluster-wide cap, and records the node; a lost node's
// dispatches are released once and taken by exactly one node that can run them.
import assert from 'node:assert/strict';
import { beforeEach, it } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { newDispatchIn } from '../../test/support/dispatch-record.ts';
import type { Claimant } from './linear-dispatch-types.ts';
import { DispatchStore } from './linear-dispatches.ts';

const a: Claimant = { node: 'a', workspaces: ['/work/a'], harnesses: ['claude'] };
const b: Claimant = { node: 'b', workspaces: ['/work/a/', '/work/b'], harnesses: ['claude', 'codex'] };

describeEachDatabase('DispatchStore placement', (fresh) => {
  let store: DispatchStore;

  beforeEach(async () => {
    store = new DispatchStore((await fresh()).db);
  });

  it('a claim takes the oldest dispatch this node can run and records the node; others stay queued in order', async () => {
    await store.insert(newDispatchIn('1', '/work/b/repo', 1));
    await store.insert(newDispatchIn('2', '/work/a', 2));
    await store.insert(newDispatchIn('3', '/work/ab/repo', 3));
    await store.insert(newDispatchIn('4', '/work/a/x', 4, 'codex'));
    const first = await store.claimNextQueued(10, 10, a);
    assert.deepEqual([first?.id, first?.status, first?.node], ['2', 'dispatched', 'a']);
    // /work/ab is not under /work/a; codex is not a's.
    assert.equal(await store.claimNextQueued(10, 11, a), null);
    assert.deepEqual((await store.claimNextQueued(10, 12, b))?.id, '1');
    assert.deepEqual((await store.claimNextQueued(10, 13, b))?.id, '4');
    assert.equal(await store.claimNextQueued(10, 14, b), null, '/work/ab/repo is nobody’s');
    assert.deepEqual(
      (await store.list()).map((d) => [d.id, d.status, d.node]),
      [
        ['1', 'dispatched', 'b'],
        ['2', 'dispatched', 'a'],
        ['3', 'queued', null],
        ['4', 'dispatched', 'b'],
      ],
    );
  });

  it('the cap counts the slots of every node', async () => {
    await store.insert(newDispatchIn('1', '/work/a/r', 1));
    await store.insert(newDispatchIn('2', '/work/a/r2', 2));
    await store.insert(newDispatchIn('3', '/work/a/r3', 3));
    assert.equal((await store.claimNextQueued(2, 10, a))?.id, '1');
    assert.equal((await store.claimNextQueued(2, 11, b))?.id, '2');
    assert.equal(await store.claimNextQueued(2, 12, a), null, 'two slots are taken, on two nodes');
    await store.compareAndSwap('2', 'dispatched', 'stuck', 13);
    assert.equal((await store.claimNextQueued(2, 14, a))?.id, '3');
  });

  it("a lost node's unfinished dispatches are released once, and each is taken by one node that can run it", async () => {
    await store.insert(newDispatchIn('1', '/work/a/r', 1));
    await store.insert(newDispatchIn('2', '/work/b/r', 2));
    await store.insert(newDispatchIn('3', '/work/b/r3', 3));
    await store.claimNextQueued(10, 10, b);
    await store.claimNextQueued(10, 11, b);
    await store.claimNextQueued(10, 12, b);
    await store.compareAndSwap('1', 'dispatched', 'working', 13);
    await store.compareAndSwap('3', 'dispatched', 'done', 14);
    const released = await store.releaseNode('b', 20);
    assert.deepEqual(released.map((d) => [d.id, d.status, d.node]).sort(), [
      ['1', 'working', null],
      ['2', 'dispatched', null],
    ]);
    assert.deepEqual(await store.releaseNode('b', 21), [], 'released once');
    assert.equal((await store.get('3'))?.node, 'b', 'a finished dispatch keeps its node (history)');
    // a can run only the one in /work/a; the other waits for a node holding /work/b.
    const taken = await store.claimReleased(a, 22);
    assert.deepEqual([taken?.id, taken?.status, taken?.node], ['1', 'working', 'a']);
    assert.equal(await store.claimReleased(a, 23), null);
    const c: Claimant = { node: 'c', workspaces: ['/work/b'], harnesses: ['claude'] };
    const [x, y] = await Promise.all([store.claimReleased(c, 24), store.claimReleased({ ...c, node: 'd' }, 24)]);
    assert.deepEqual(
      [x, y].filter((d) => d !== null).map((d) => d.id),
      ['2'],
      'taken by exactly one',
    );
  });

  it("a node's view moves only its own dispatches: not once released, nor once another node took them", async () => {
    await store.insert(newDispatchIn('1', '/work/b/r', 1));
    await store.claimNextQueued(10, 10, b);
    const onB = store.ownedBy('b');
    const onC = store.ownedBy('c');
    assert.equal(await onC.compareAndSwap('1', 'dispatched', 'working', 11), null, "c cannot move b's dispatch");
    assert.equal(await onC.update('1', { worktreePath: '/elsewhere' }, 11), null);
    assert.equal((await onB.compareAndSwap('1', 'dispatched', 'working', 12))?.status, 'working');
    await store.releaseNode('b', 20);
    // b was declared lost while it still ran: its phase, still going, cannot move the released dispatch any more.
    assert.equal(await onB.compareAndSwap('1', 'working', 'auditing', 21), null, 'released: b no longer moves it');
    assert.equal(await onB.update('1', { worktreePath: '/stale' }, 21), null);
    await onB.touch('1', 22);
    const c: Claimant = { node: 'c', workspaces: ['/work/b'], harnesses: ['claude'] };
    assert.equal((await store.claimReleased(c, 23))?.node, 'c');
    assert.equal(await onB.compareAndSwap('1', 'working', 'auditing', 24), null, 'taken by c: b still cannot');
    assert.equal((await onC.compareAndSwap('1', 'working', 'auditing', 25))?.status, 'auditing');
    const row = await store.get('1');
    assert.deepEqual([row?.status, row?.worktreePath ?? null, row?.lastActivityAt], ['auditing', null, 23]);
  });
});
