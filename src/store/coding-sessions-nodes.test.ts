// The node column of coding sessions, on SQLite and on PostgreSQL: sessions counted per node in one query, a lost
// node's sessions found and interrupted by a compare-and-swap (one taker wins each, with one owed notice), open runs
// closed for this node only, and (PostgreSQL) pages never served from a cache another node's write made stale.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { storedSession } from '../../test/support/stored-session.ts';
import { CodingSessionStore } from './coding-sessions.ts';
import { RestartNoticeStore } from './restart-notices.ts';

describeEachDatabase('CodingSessionStore nodes', (fresh) => {
  test('counts starting and running sessions per node and lists a node’s active sessions', async () => {
    const store = new CodingSessionStore((await fresh()).db);
    const rows = [
      storedSession({ id: 'a1', name: 'a1', node: 'alpha', status: 'running', startedAt: 1 }),
      storedSession({ id: 'a2', name: 'a2', node: 'alpha', status: 'starting', startedAt: 2 }),
      storedSession({ id: 'a3', name: 'a3', node: 'alpha', status: 'completed', startedAt: 3 }),
      storedSession({ id: 'b1', name: 'b1', node: 'beta', status: 'running', startedAt: 4 }),
      storedSession({ id: 'q1', name: 'q1', node: null, status: 'queued', startedAt: 5 }),
    ];
    for (const row of rows) await store.insert(row);
    assert.deepEqual([...(await store.activeByNode())].sort(), [
      ['alpha', 2],
      ['beta', 1],
    ]);
    assert.deepEqual(
      (await store.activeOn('alpha')).map((s) => s.id),
      ['a1', 'a2'],
    );
    assert.equal((await store.get('a1'))?.node, 'alpha');
    // A queued launch is never evicted (it has not run yet).
    assert.deepEqual((await store.evictionCandidates(0)).sort(), ['a3']);
  });

  test('a lost node’s session is marked once: the second taker’s compare-and-swap records no notice', async () => {
    const { db } = await fresh();
    const store = new CodingSessionStore(db);
    const notices = new RestartNoticeStore(db);
    await store.insert(storedSession({ id: 's1', name: 'one', node: 'gamma', status: 'running' }));
    const patch = { status: 'interrupted', endReason: 'node gamma lost', completedAt: 9 } as const;
    const outcomes: boolean[] = [];
    for (let i = 0; i < 2; i++) {
      await notices.markWithNotice('s1', 9, async (trx) => {
        const won = await store.patchIfActiveOn('s1', 'gamma', patch, trx);
        outcomes.push(won);
        return won;
      });
      await notices.done(await notices.pending());
    }
    assert.deepEqual(outcomes, [true, false]);
    assert.deepEqual(await notices.pending(), []);
    const one = await store.get('s1');
    assert.deepEqual([one?.status, one?.endReason], ['interrupted', 'node gamma lost']);
    // Another node's session is never taken by a CAS naming the wrong node.
    await store.insert(storedSession({ id: 's2', name: 'two', node: 'alpha', status: 'running' }));
    assert.equal(await store.patchIfActiveOn('s2', 'gamma', patch), false);
  });

  test('closing open runs for one node leaves the runs of sessions other nodes run', async () => {
    const store = new CodingSessionStore((await fresh()).db);
    const mine = storedSession({ id: 'm', name: 'm', node: 'alpha', status: 'interrupted' });
    const theirs = storedSession({ id: 't', name: 't', node: 'beta', status: 'running' });
    await store.insertLaunched(mine, 1);
    await store.insertLaunched(theirs, 1);
    assert.equal(await store.closeOpenRuns(5, { node: 'alpha' }), 1);
    assert.equal(await store.closeOpenRuns(5), 1);
  });
});

describeEachDatabase('CodingSessionStore pages across nodes', (fresh) => {
  test('a page read again shows a write another store (another node) made', async () => {
    const { db, dialect } = await fresh();
    const here = new CodingSessionStore(db);
    const there = new CodingSessionStore(db);
    await here.insert(storedSession({ id: 's1', name: 'one', status: 'running' }));
    assert.equal((await here.page({ limit: 10 })).sessions[0]?.status, 'running');
    await there.update('s1', { status: 'completed' });
    const again = (await here.page({ limit: 10 })).sessions[0]?.status;
    // SQLite is one node's own file (every write goes through its one store); PostgreSQL is shared: never cached.
    if (dialect === 'postgres') assert.equal(again, 'completed');
  });
});
