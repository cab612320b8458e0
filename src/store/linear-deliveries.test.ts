import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { tempDir } from '../../test/support/temp-dir.ts';
import { openDatabase } from './database.ts';
import { sqliteKysely } from './kysely/connection.ts';
import { LinearDeliveryStore } from './linear-deliveries.ts';
import { runnableQuery } from './linear-delivery-queue.ts';
import type { NewDelivery } from './linear-delivery-types.ts';

function delivery(n: number, orderKey: string): NewDelivery {
  return {
    deliveryId: `d-${n}`,
    eventType: 'Issue',
    action: 'update',
    orderKey,
    payload: '{}',
    bodyDigest: `digest-${n}`,
    receivedAt: 1,
  };
}

describe('LinearDeliveryStore on SQLite', () => {
  it('claims from the index of pending deliveries in arrival order: no sort of the backlog', () => {
    const db = openDatabase(':memory:');
    const compiled = runnableQuery(sqliteKysely(db), 0, 1).compile();
    const plan = (
      db.prepare(`EXPLAIN QUERY PLAN ${compiled.sql}`).all(...(compiled.parameters as number[])) as { detail: string }[]
    ).map((r) => r.detail);
    assert.ok(!plan.some((d) => /TEMP B-TREE/.test(d)), plan.join('\n'));
    assert.ok(
      plan.some((d) => /linear_webhook_deliveries_pending/.test(d)),
      plan.join('\n'),
    );
    // The look-behind for an open earlier delivery of the same key uses the partial index of open deliveries.
    assert.ok(
      plan.some((d) => /linear_webhook_deliveries_open/.test(d)),
      plan.join('\n'),
    );
  });

  it("commits the worker's bookkeeping without fsync and gives the connection its synchronous setting back", async () => {
    const db = openDatabase(':memory:');
    const store = new LinearDeliveryStore(sqliteKysely(db));
    await store.enqueueMany([delivery(1, 'a')]);
    await store.settleAndClaim([], 10, 1);
    assert.equal((db.prepare('PRAGMA synchronous').get() as { synchronous: number }).synchronous, 2, 'FULL again');
  });

  it("runs the intake's commit with FULL even when it arrives while the worker's bookkeeping holds the connection", async () => {
    const db = openDatabase(':memory:');
    const synchronous = () => (db.prepare('PRAGMA synchronous').get() as { synchronous: number }).synchronous;
    // The synchronous setting in force at every commit the store makes (each an explicit COMMIT: the intake's inserts
    // and the worker's bookkeeping are transactions). The dialect prepares each statement on the connection.
    const atCommit: number[] = [];
    const watched = new Proxy(db, {
      get(target, key) {
        if (key === 'prepare') {
          return (sqlText: string) => {
            const statement = target.prepare(sqlText);
            if (!/^\s*commit/i.test(sqlText)) return statement;
            return new Proxy(statement, {
              get(st, k) {
                const value = Reflect.get(st, k) as unknown;
                if ((k !== 'run' && k !== 'all') || typeof value !== 'function')
                  return typeof value === 'function' ? value.bind(st) : value;
                return (...args: unknown[]) => (atCommit.push(synchronous()), value.apply(st, args));
              },
            });
          };
        }
        const value = Reflect.get(target, key) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const store = new LinearDeliveryStore(sqliteKysely(watched));
    await store.enqueueMany([delivery(1, 'a')]);
    const [claimed, queued] = await Promise.all([
      store.settleAndClaim([], 10, 1),
      store.enqueueMany([delivery(2, 'b')]),
    ]);
    assert.equal(claimed.length, 1);
    assert.deepEqual(queued, [true]);
    assert.deepEqual(atCommit, [2, 1, 2], 'intake FULL, worker NORMAL, intake FULL');
    assert.equal(synchronous(), 2);
  });

  it('writes nothing (no commit to sync) for a group of redeliveries only, and commits a group with one new delivery', async () => {
    const dir = tempDir('sb-deliveries-');
    const db = openDatabase(join(dir.path, 'state.db'));
    try {
      const store = new LinearDeliveryStore(sqliteKysely(db));
      assert.deepEqual(await store.enqueueMany([delivery(1, 'a'), delivery(2, 'b')]), [true, true]);
      const wal = () => statSync(join(dir.path, 'state.db-wal')).size;
      const before = wal();
      const sameDigest = { ...delivery(9, 'c'), bodyDigest: 'digest-2' };
      assert.deepEqual(await store.enqueueMany([delivery(1, 'a'), sameDigest]), [false, false]);
      assert.equal(wal(), before, 'nothing appended to the WAL');
      assert.equal(db.isTransaction, false);
      assert.deepEqual(await store.enqueueMany([delivery(2, 'b'), delivery(3, 'c')]), [false, true]);
      assert.ok(wal() > before);
      assert.equal((await store.get('d-3'))?.status, 'pending');
      assert.equal((await store.counts()).pending, 3);
    } finally {
      db.close();
      dir.remove();
    }
  });
});

describeEachDatabase('LinearDeliveryStore claims', (fresh) => {
  it('claims a batch in one query: oldest first, at most one per order key, none behind an open delivery of its key', async () => {
    const store = new LinearDeliveryStore((await fresh()).db);
    await store.enqueueMany([delivery(1, 'a'), delivery(2, 'a'), delivery(3, 'b'), delivery(4, 'c'), delivery(5, 'b')]);
    const first = await store.settleAndClaim([], 10, 10);
    assert.deepEqual(
      first.map((d) => d.deliveryId),
      ['d-1', 'd-3', 'd-4'],
    );
    assert.ok(first.every((d) => d.status === 'processing' && d.attempts === 1));
    assert.deepEqual(await store.settleAndClaim([], 10, 10), [], 'the rest wait behind their key');
    const next = await store.settleAndClaim([{ seq: first[0]?.seq ?? 0, kind: 'done', outcome: 'ok' }], 11, 10);
    assert.deepEqual(
      next.map((d) => d.deliveryId),
      ['d-2'],
    );
    assert.equal((await store.get('d-1'))?.status, 'done');
  });

  it('dedups by delivery id and by body digest, within a group and across groups', async () => {
    const store = new LinearDeliveryStore((await fresh()).db);
    const sameDigest = { ...delivery(9, 'c'), bodyDigest: 'digest-1' };
    assert.deepEqual(await store.enqueueMany([delivery(1, 'a'), delivery(1, 'a'), sameDigest, delivery(2, 'b')]), [
      true,
      false,
      false,
      true,
    ]);
    assert.deepEqual(await store.enqueueMany([delivery(2, 'b'), { ...delivery(7, 'x'), bodyDigest: 'digest-2' }]), [
      false,
      false,
    ]);
    assert.equal(await store.enqueue(delivery(3, 'c')), true);
    assert.deepEqual(await store.counts(), { pending: 3, processing: 0, done: 0, dead: 0 });
  });

  it('records retries and dead letters, retries a dead delivery, recovers interrupted ones and prunes finished ones', async () => {
    const store = new LinearDeliveryStore((await fresh()).db);
    await store.enqueueMany([delivery(1, 'a'), delivery(2, 'b'), delivery(3, 'c')]);
    const [a, b, c] = await store.settleAndClaim([], 10, 3);
    assert.ok(a && b && c);
    await store.fail(a.seq, 'busy', 20, 500);
    await store.fail(b.seq, 'broken', 20, null);
    assert.equal(await store.nextDueAfter(20), 500);
    assert.equal(await store.hasRunnable(20), false, 'a waits for its retry time; c is processing');
    assert.equal(await store.hasRunnable(500), true);
    assert.deepEqual(
      (await store.deadLetters()).map((d) => d.deliveryId),
      ['d-2'],
    );
    assert.equal(await store.retryDead('d-2', 30), true);
    assert.equal(await store.retryDead('d-2', 30), false, 'not dead any more');
    assert.equal((await store.get('d-2'))?.attempts, 0);
    assert.equal(await store.recoverInterrupted(40), 1, 'c was left processing');
    const again = await store.claimNext(40);
    assert.equal(again?.deliveryId, 'd-2');
    await store.complete(again?.seq ?? 0, 'handled', 50);
    assert.equal((await store.get('d-2'))?.outcome, 'handled');
    assert.equal(await store.prune(51), 1);
    assert.equal(await store.get('d-2'), undefined);
  });
});
