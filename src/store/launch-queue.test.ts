// The cluster's launch queue on PostgreSQL (SQLite runs launches on its one node, with no queue): FIFO among the
// launches a node can run (harness, `on`, labels, workspaces), positions, a cancel that races a claim, and concurrent
// claimers on separate connections that take every launch exactly once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { storedSession } from '../../test/support/stored-session.ts';
import type { Placement } from './coding-session-types.ts';
import { CodingSessionStore } from './coding-sessions.ts';
import type { NodeAbility } from './launch-queue.ts';
import { LaunchQueueStore } from './launch-queue.ts';

const alpha: NodeAbility = { name: 'alpha', labels: ['linux'], harnesses: ['claude'], workspaces: ['/repos/a'] };
const beta: NodeAbility = {
  name: 'beta',
  labels: ['gpu', 'linux'],
  harnesses: ['claude', 'codex'],
  workspaces: ['/repos/a', '/repos/b/'],
};

describeEachDatabase('LaunchQueueStore', (fresh) => {
  async function queue(
    sessions: CodingSessionStore,
    id: string,
    at: number,
    workdir: string,
    placement: Placement = {},
    harness: 'claude' | 'codex' = 'claude',
  ): Promise<void> {
    await sessions.insertQueued(
      storedSession({ id, name: id, status: 'queued', startedAt: at, workdir, harness }, { harness }),
      placement,
    );
  }

  test('claims the oldest launch each node can run, by harness, on, labels and workspace', async (t) => {
    const { db, dialect } = await fresh();
    if (dialect === 'sqlite') return t.skip('the launch queue runs on PostgreSQL only');
    const sessions = new CodingSessionStore(db);
    const store = new LaunchQueueStore(db);
    await queue(sessions, 'q1', 1, '/repos/b/x');
    await queue(sessions, 'q2', 2, '/repos/a', { labels: ['gpu'] });
    await queue(sessions, 'q3', 3, '/repos/a/sub', {}, 'codex');
    await queue(sessions, 'q4', 4, '/repos/a/sub', { on: 'beta' });
    await queue(sessions, 'q5', 5, '/repos/ab');
    await queue(sessions, 'q6', 6, '/repos/a/deep/er');
    assert.deepEqual(await Promise.all(['q1', 'q4', 'q6'].map((id) => store.position(id))), [1, 4, 6]);
    // alpha: not q1 (workspace), q2 (label), q3 (harness), q4 (on), q5 (a sibling of /repos/a, not inside it).
    const a = await store.claimNext(alpha, 100);
    assert.deepEqual(
      [a?.record.id, a?.record.status, a?.record.node, a?.record.startedAt],
      ['q6', 'starting', 'alpha', 100],
    );
    assert.equal(await store.claimNext(alpha, 101), null);
    const order: string[] = [];
    for (let claimed = await store.claimNext(beta, 102); claimed; claimed = await store.claimNext(beta, 103))
      order.push(claimed.record.id);
    assert.deepEqual(order, ['q1', 'q2', 'q3', 'q4']);
    assert.equal(await store.position('q5'), 1);
    assert.equal(await store.position('q1'), null);
    const runs = await db.selectFrom('session_runs').select(['session_id', 'status']).orderBy('session_id').execute();
    assert.deepEqual(
      runs.map((r) => r.session_id),
      ['q1', 'q2', 'q3', 'q4', 'q6'],
    );
  });

  test('a queued launch is cancelled once; a claimed one is not cancelled', async (t) => {
    const { db, dialect } = await fresh();
    if (dialect === 'sqlite') return t.skip('the launch queue runs on PostgreSQL only');
    const sessions = new CodingSessionStore(db);
    const store = new LaunchQueueStore(db);
    await queue(sessions, 'q1', 1, '/repos/a');
    await queue(sessions, 'q2', 2, '/repos/a');
    const killed = await sessions.cancelQueued('q1', 'killed by user', 50);
    assert.deepEqual([killed?.status, killed?.endReason, killed?.completedAt], ['killed', 'killed by user', 50]);
    assert.equal(await sessions.cancelQueued('q1', 'again', 51), null);
    assert.equal((await store.claimNext(alpha, 60))?.record.id, 'q2');
    assert.equal(await sessions.cancelQueued('q2', 'too late', 61), null);
    assert.equal((await sessions.get('q2'))?.status, 'starting');
  });

  test('concurrent claimers on separate connections take every launch exactly once', async (t) => {
    const { db, dialect } = await fresh();
    if (dialect === 'sqlite') return t.skip('the launch queue runs on PostgreSQL only');
    const sessions = new CodingSessionStore(db);
    for (let i = 0; i < 40; i++) await queue(sessions, `q${String(i).padStart(2, '0')}`, i, '/repos/a');
    // Three claimers at once, each transaction on its own connection of the pool; each claims until none is left.
    const claimers = [alpha, beta, { ...alpha, name: 'gamma' }].map((node) => ({
      node,
      store: new LaunchQueueStore(db),
    }));
    const taken = await Promise.all(
      claimers.map(async ({ node, store }) => {
        const mine: string[] = [];
        for (let c = await store.claimNext(node, 1); c; c = await store.claimNext(node, 1)) mine.push(c.record.id);
        return mine;
      }),
    );
    const all = taken.flat().sort();
    assert.equal(all.length, 40);
    assert.equal(new Set(all).size, 40);
    const rows = await db.selectFrom('session_runs').select('session_id').execute();
    assert.equal(rows.length, 40);
  });
});
