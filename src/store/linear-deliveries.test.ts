import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from '../../test/support/temp-dir.ts';
import { openDatabase } from './database.ts';
import { LinearDeliveryStore, RUNNABLE } from './linear-deliveries.ts';
import type { NewDelivery } from './linear-deliveries.ts';

function delivery(n: number, orderKey: string): NewDelivery {
  return { deliveryId: `d-${n}`, eventType: 'Issue', action: 'update', orderKey, payload: '{}', bodyDigest: `digest-${n}`, receivedAt: 1 };
}

describe('LinearDeliveryStore claims', () => {
  it('claims from the index of pending deliveries in arrival order: no sort of the backlog', () => {
    const db = openDatabase(':memory:');
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${RUNNABLE}`).all(0, 1) as { detail: string }[]).map((r) => r.detail);
    assert.ok(!plan.some((d) => /TEMP B-TREE/.test(d)), plan.join('\n'));
    assert.ok(plan.some((d) => /linear_webhook_deliveries_pending/.test(d)), plan.join('\n'));
  });

  it('claims a batch in one query: oldest first, at most one per order key, none behind an open delivery of its key', () => {
    const store = new LinearDeliveryStore(openDatabase(':memory:'));
    store.enqueueMany([delivery(1, 'a'), delivery(2, 'a'), delivery(3, 'b'), delivery(4, 'c'), delivery(5, 'b')]);
    const first = store.settleAndClaim([], 10, 10);
    assert.deepEqual(first.map((d) => d.deliveryId), ['d-1', 'd-3', 'd-4']);
    assert.ok(first.every((d) => d.status === 'processing' && d.attempts === 1));
    assert.deepEqual(store.settleAndClaim([], 10, 10), [], 'the rest wait behind their key');
    const next = store.settleAndClaim([{ seq: first[0]?.seq ?? 0, kind: 'done', outcome: 'ok' }], 11, 10);
    assert.deepEqual(next.map((d) => d.deliveryId), ['d-2']);
    assert.equal(store.get('d-1')?.status, 'done');
  });

  it("commits the worker's bookkeeping without fsync and gives the connection its synchronous setting back", () => {
    const db = openDatabase(':memory:');
    const store = new LinearDeliveryStore(db);
    store.enqueueMany([delivery(1, 'a')]);
    store.settleAndClaim([], 10, 1);
    assert.equal((db.prepare('PRAGMA synchronous').get() as { synchronous: number }).synchronous, 2, 'FULL again');
  });

  it('writes nothing (no commit to sync) for a group of redeliveries only, and commits a group with one new delivery', () => {
    const dir = tempDir('sb-deliveries-');
    const db = openDatabase(join(dir.path, 'state.db'));
    try {
      const store = new LinearDeliveryStore(db);
      assert.deepEqual(store.enqueueMany([delivery(1, 'a'), delivery(2, 'b')]), [true, true]);
      const wal = () => statSync(join(dir.path, 'state.db-wal')).size;
      const before = wal();
      const sameDigest = { ...delivery(9, 'c'), bodyDigest: 'digest-2' };
      assert.deepEqual(store.enqueueMany([delivery(1, 'a'), sameDigest]), [false, false]);
      assert.equal(wal(), before, 'nothing appended to the WAL');
      assert.equal(db.isTransaction, false);
      assert.deepEqual(store.enqueueMany([delivery(2, 'b'), delivery(3, 'c')]), [false, true]);
      assert.ok(wal() > before);
      assert.equal(store.get('d-3')?.status, 'pending');
      assert.equal(store.counts().pending, 3);
    } finally {
      db.close();
      dir.remove();
    }
  });
});
