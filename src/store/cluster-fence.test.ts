// The fence on both databases: a write guarded by the `primary` lease commits while this run holds it and is refused
// (nothing written) once the lease was released to a taker or taken by another run; the outbox's claim and the log
// records' commit use it in their own transaction, and a fenced RecordMirror drops what it holds instead of retrying.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { waitFor } from '../../test/support/wait-for.ts';
import { ManualClock } from '../core/clock.ts';
import { silentLogger } from '../core/logger.ts';
import { FencedError, isFenced, leaseFence } from './cluster-fence.ts';
import { LeaseStore } from './cluster-leases.ts';
import { LogRecordStore, RecordMirror } from './log-records.ts';
import { OutboxStore } from './outbox-store.ts';

const A = { node: 'a', incarnation: 'a-1' };
const B = { node: 'b', incarnation: 'b-1' };

const entry = {
  targetKey: 'chat|1',
  target: JSON.stringify({ channel: 'chat', chat: '1' }),
  channel: 'chat',
  text: 'reply',
};

describeEachDatabase('leaseFence', (fresh) => {
  test('a fenced outbox claim commits while the lease is ours, and is refused (unchanged row) once it is not', async () => {
    const { db, dialect } = await fresh();
    const leases = new LeaseStore(db);
    const fence = leaseFence({ name: 'primary', ...A, lock: dialect === 'postgres' });
    const store = new OutboxStore(db, fence);
    const id = await store.enqueue(entry, 1);
    assert.ok(id !== null);
    await assert.rejects(store.claim(id, 2), FencedError, 'no lease at all: refused');
    assert.equal((await store.get(id))?.status, 'pending');
    assert.equal(await leases.acquire('primary', A, 3, 1000), true);
    await store.claim(id, 4);
    assert.equal((await store.get(id))?.status, 'sending', 'held: the claim commits');
    await store.unclaim(id, 5);
    // Declared down: the taker ends this node's leases and takes `primary` itself.
    assert.equal(await leases.releaseAllOf('a'), 1);
    await assert.rejects(store.claim(id, 6), (error: unknown) => isFenced(error) && error.kind === 'unavailable');
    assert.equal(await leases.acquire('primary', B, 7, 1000), true);
    await assert.rejects(store.claim(id, 8), FencedError, 'another holder: refused');
    const row = await store.get(id);
    assert.equal(row?.status, 'pending');
    assert.equal(row?.updatedAt, 5, 'a refused claim wrote nothing');
    // The same node name under a new run (a restart) is another token: the old run's fence stays refused.
    await leases.releaseAllOf('b');
    assert.equal(await leases.acquire('primary', { node: 'a', incarnation: 'a-2' }, 9, 1000), true);
    await assert.rejects(store.claim(id, 10), FencedError);
  });

  test('an unfenced store (SQLite, one node) claims as before', async () => {
    const { db } = await fresh();
    const store = new OutboxStore(db);
    const id = await store.enqueue(entry, 1);
    assert.ok(id !== null);
    await store.claim(id, 2);
    assert.equal((await store.get(id))?.status, 'sending');
  });

  test('fenced log records commit while held; once refused the mirror drops its queue and rejects every sync', async () => {
    const { db, dialect } = await fresh();
    const leases = new LeaseStore(db);
    const fence = leaseFence({ name: 'primary', ...A, lock: dialect === 'postgres' });
    const store = new LogRecordStore(db, { notify: false, fence });
    const plain = new LogRecordStore(db, { notify: false });
    const mirror = new RecordMirror({ store, logger: silentLogger(), clock: new ManualClock(), retryMs: 1000 });
    assert.equal(await leases.acquire('primary', A, 1, 1000), true);
    mirror.write('engine', 'e1', { v: 1, seq: 1, ts: 1, type: 'incoming' });
    await mirror.sync();
    assert.deepEqual(
      (await plain.read('engine', 'e1')).map((r) => r.seq),
      [1],
    );
    // The taker releases the lease and rebuilds from the table; this node then writes seq 2 (an in-flight commit).
    await leases.releaseAllOf('a');
    assert.equal(await leases.acquire('primary', B, 2, 1000), true);
    mirror.write('engine', 'e1', { v: 1, seq: 2, ts: 2, type: 'turn_end' });
    await assert.rejects(mirror.sync(), FencedError, 'the acknowledgement waiting on this commit fails');
    await assert.rejects(mirror.sync(), FencedError, 'and so does every later one');
    mirror.write('engine', 'e1', { v: 1, seq: 3, ts: 3, type: 'turn_end' });
    await assert.rejects(mirror.sync(), FencedError);
    assert.deepEqual(
      (await plain.read('engine', 'e1')).map((r) => r.seq),
      [1],
      'nothing of the stale holder reached the table',
    );
    await assert.rejects(store.apply([{ op: 'remove', kind: 'engine', log: 'e1' }]), FencedError);
    assert.equal((await plain.read('engine', 'e1')).length, 1);

    // The node rejoined and holds the lease again under a fresh incarnation (its fence reads the current one).
    let incarnation = A.incarnation;
    const following = new LogRecordStore(db, {
      notify: false,
      fence: leaseFence({ name: 'primary', node: 'a', incarnation: () => incarnation, lock: dialect === 'postgres' }),
    });
    const again = new RecordMirror({ store: following, logger: silentLogger(), clock: new ManualClock(), retryMs: 1 });
    again.write('engine', 'e1', { v: 1, seq: 2, ts: 4, type: 'turn_end' });
    await assert.rejects(again.sync(), FencedError);
    await leases.releaseAllOf('b');
    incarnation = 'a-2';
    assert.equal(await leases.acquire('primary', { node: 'a', incarnation }, 5, 1000), true);
    await assert.rejects(mirror.sync(), FencedError, 'still fenced until told otherwise');
    again.unfence();
    again.write('engine', 'e1', { v: 1, seq: 2, ts: 6, type: 'incoming' });
    await again.sync();
    assert.deepEqual(
      (await plain.read('engine', 'e1')).map((r) => [r.seq, r.ts]),
      [
        [1, 1],
        [2, 6],
      ],
      'after unfence only what was written since is committed',
    );
    await Promise.all([mirror.close(), again.close()]);
  });
});

describeEachDatabase('leaseFence on PostgreSQL', (fresh) => {
  test('a taker releasing the lease waits for a fenced write in flight, which commits first', async (t) => {
    const { db, dialect } = await fresh();
    if (dialect !== 'postgres') return t.skip('row locks are PostgreSQL');
    const leases = new LeaseStore(db);
    assert.equal(await leases.acquire('primary', A, 1, 1000), true);
    const store = new OutboxStore(db);
    const id = await store.enqueue(entry, 1);
    assert.ok(id !== null);
    const fence = leaseFence({ name: 'primary', ...A, lock: true });
    let resume = (): void => {};
    const paused = new Promise<void>((resolve) => (resume = resolve));
    let checked = (): void => {};
    const inside = new Promise<void>((resolve) => (checked = resolve));
    const order: string[] = [];
    const note = (what: string): void => void order.push(what);
    const write = db.transaction().execute(async (trx) => {
      await fence(trx);
      checked();
      await paused;
      await trx.updateTable('outbox_messages').set({ status: 'sending' }).where('id', '=', id).execute();
    });
    await inside;
    const release = leases.releaseAllOf('a').then((n) => note(`released ${n}`));
    // The DELETE of the lease row waits on the write's share lock.
    await waitFor('the release to wait on the lock', async () => {
      const rows = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE wait_event_type = 'Lock' AND query LIKE 'delete from "cluster_leases"%'`.execute(db);
      return (rows.rows[0]?.n ?? 0) > 0;
    });
    assert.deepEqual(order, [], 'the release waits while the fenced write is open');
    resume();
    // The write commits (the release's DELETE was queued behind its lock, so the commit cannot have been refused);
    // which of the two answers reaches this process first is up to the two connections.
    await write;
    await release;
    assert.deepEqual(order, ['released 1']);
    assert.equal((await store.get(id))?.status, 'sending');
  });
});
