// Fenced dispatch claims on both databases: a claimant with an incarnation claims only while its node's row is `up`
// under it; declared down, replaced by another run, or not joined yet, it claims nothing (queued or released). On
// PostgreSQL a node marking it down waits for a claim in flight, so the takeover's release sees what it took.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { newDispatchIn } from '../../test/support/dispatch-record.ts';
import { waitFor } from '../../test/support/wait-for.ts';
import { ClusterNodeStore } from './cluster-nodes.ts';
import type { Claimant } from './linear-dispatch-types.ts';
import { DispatchStore } from './linear-dispatches.ts';
import { memberServing } from './node-fence.ts';

/** Node `name` joining under `incarnation` at `now`. */
function joining(name: string, incarnation: string, now: number) {
  return {
    name,
    incarnation,
    labels: [],
    harnesses: ['claude' as const],
    workspaces: ['/work'],
    maxSessions: 4,
    url: null,
    startedAt: now,
  };
}

describeEachDatabase('fenced dispatch claims', (fresh) => {
  it('a node claims while up under its incarnation, and nothing once down, replaced or before it joined', async () => {
    const { db } = await fresh();
    const nodes = new ClusterNodeStore(db);
    const store = new DispatchStore(db);
    const a: Claimant = {
      node: 'a',
      workspaces: ['/work'],
      harnesses: ['claude'],
      incarnation: () => nodes.joinedAs('a'),
    };
    for (const [id, at] of [
      ['1', 1],
      ['2', 2],
      ['3', 3],
      ['4', 4],
    ] as const)
      await store.insert(newDispatchIn(id, '/work/r', at));
    assert.equal(await store.claimNextQueued(10, 5, a), null, 'not joined yet: no incarnation');
    await nodes.join(joining('a', 'a-1', 6), 6);
    assert.equal(nodes.joinedAs('a'), 'a-1');
    assert.equal((await store.claimNextQueued(10, 7, a))?.id, '1', 'up under a-1: claims');
    // Declared down while it ran (its heartbeat is late): the row stays a-1's, but `down`.
    assert.deepEqual(
      (await nodes.markStale(100, 100, 'b')).map((n) => n.name),
      ['a'],
    );
    assert.equal(await store.claimNextQueued(10, 101, a), null, 'down: claims no queued dispatch');
    // The taker releases a's dispatch; a, still down, cannot take it back.
    assert.deepEqual(
      (await store.releaseNode('a', 102)).map((d) => d.id),
      ['1'],
    );
    assert.equal(await store.claimReleased(a, 103), null, 'down: claims no released dispatch');
    const b: Claimant = { node: 'b', workspaces: ['/work'], harnesses: ['claude'] };
    assert.equal((await store.claimReleased(b, 104))?.id, '1', 'another node takes it');
    // Another process took the name (a new run of a, other incarnation): the old run still claims nothing.
    const other = new ClusterNodeStore(db);
    await other.join(joining('a', 'a-other', 105), 105);
    assert.equal(await store.claimNextQueued(10, 106, a), null, 'replaced: another incarnation is up');
    // This run rejoins under a fresh incarnation: it claims again.
    await nodes.join(joining('a', 'a-2', 107), 107);
    assert.equal((await store.claimNextQueued(10, 108, a))?.id, '2');
    assert.deepEqual(
      (await store.list()).map((d) => [d.id, d.status, d.node]),
      [
        ['1', 'dispatched', 'b'],
        ['2', 'dispatched', 'a'],
        ['3', 'queued', null],
        ['4', 'queued', null],
      ],
    );
  });

  it('an unfenced claimant (no incarnation) claims as before', async () => {
    const { db } = await fresh();
    const store = new DispatchStore(db);
    await store.insert(newDispatchIn('1', '/work/r', 1));
    const c: Claimant = { node: 'c', workspaces: ['/work'], harnesses: ['claude'] };
    assert.equal((await store.claimNextQueued(10, 2, c))?.id, '1');
  });

  it('on PostgreSQL, marking a node down waits for its claim in flight (the row is read FOR SHARE)', async (t) => {
    const { db, dialect } = await fresh();
    if (dialect !== 'postgres') return t.skip('row locks are PostgreSQL');
    const nodes = new ClusterNodeStore(db);
    await nodes.join(joining('a', 'a-1', 1), 1);
    let resume = (): void => {};
    const paused = new Promise<void>((resolve) => (resume = resolve));
    let checked = (): void => {};
    const inside = new Promise<void>((resolve) => (checked = resolve));
    const order: string[] = [];
    const claim = db.transaction().execute(async (trx) => {
      assert.equal(await memberServing(trx, { node: 'a', incarnation: 'a-1' }), true);
      checked();
      await paused;
      order.push('claim committed');
    });
    await inside;
    const marking = nodes.markStale(100, 100, 'b').then((marked) => {
      order.push(`marked ${marked.map((n) => n.name).join()}`);
    });
    await waitFor('the mark to wait on the lock', async () => {
      const rows = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE wait_event_type = 'Lock' AND query LIKE 'update "cluster_nodes"%'`.execute(db);
      return (rows.rows[0]?.n ?? 0) > 0;
    });
    assert.deepEqual(order, [], 'the mark waits while the claim is open');
    resume();
    await claim;
    await marking;
    assert.deepEqual(order, ['claim committed', 'marked a']);
    await db.transaction().execute(async (trx) => {
      assert.equal(await memberServing(trx, { node: 'a', incarnation: 'a-1' }), false, 'down now: no claim');
    });
  });

  it('on PostgreSQL, a claim left idle by a frozen node is ended by the server, and the mark goes through', async (t) => {
    const { db, dialect } = await fresh();
    if (dialect !== 'postgres') return t.skip('row locks are PostgreSQL');
    const nodes = new ClusterNodeStore(db);
    await nodes.join(joining('a', 'a-1', 1), 1);
    let resume = (): void => {};
    const frozen = new Promise<void>((resolve) => (resume = resolve));
    let checked = (): void => {};
    const inside = new Promise<void>((resolve) => (checked = resolve));
    const claim = db.transaction().execute(async (trx) => {
      assert.equal(await memberServing(trx, { node: 'a', incarnation: 'a-1', idleTimeoutMs: 200 }), true);
      checked();
      await frozen;
      await trx.selectFrom('cluster_nodes').select('name').execute();
    });
    await inside;
    // Another node's failure detection is not held up past the bound: the server ends the idle claim.
    assert.deepEqual(
      (await nodes.markStale(100, 100, 'b')).map((n) => n.name),
      ['a'],
    );
    resume();
    await assert.rejects(claim, 'the frozen claim finds its transaction gone');
  });
});
