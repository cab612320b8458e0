// The wake outbox on both databases: an event is stored once per message id, delivered oldest first, settled once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { WakeEventStore } from './wake-events.ts';

const event = (messageId: string, now: number) => ({
  messageId,
  codingSessionId: 'cs-1',
  kind: 'waiting' as const,
  originSessionId: 'eng-1',
  text: `t ${messageId}`,
  now,
});

describeEachDatabase('WakeEventStore', (fresh) => {
  test('stores an event once per message id and hands out the oldest pending one', async () => {
    const store = new WakeEventStore((await fresh()).db);
    const first = await store.insert(event('m1', 10));
    assert.deepEqual(
      { ...first, id: 0 },
      {
        id: 0,
        messageId: 'm1',
        codingSessionId: 'cs-1',
        kind: 'waiting',
        status: 'pending',
        originSessionId: 'eng-1',
        text: 't m1',
        targetSessionId: null,
        via: null,
        attempts: 0,
        error: null,
        createdAt: 10,
        settledAt: null,
      },
    );
    assert.equal(await store.insert(event('m1', 11)), null, 'a repeat of the message id is not stored again');
    const second = await store.insert(event('m2', 12));
    assert.equal((await store.oldestPending())?.id, first?.id);
    assert.deepEqual(await store.get(first?.id ?? -1), first);
    assert.equal(await store.get(999), undefined);

    await store.recordFailure(first?.id ?? -1, 'engine stopping');
    assert.deepEqual(
      [(await store.oldestPending())?.attempts, (await store.oldestPending())?.error],
      [1, 'engine stopping'],
    );
    await store.markDelivered(first?.id ?? -1, 'eng-1', 'origin', 20);
    const delivered = await store.get(first?.id ?? -1);
    assert.deepEqual(
      [
        delivered?.status,
        delivered?.targetSessionId,
        delivered?.via,
        delivered?.attempts,
        delivered?.error,
        delivered?.settledAt,
      ],
      ['delivered', 'eng-1', 'origin', 2, null, 20],
    );
    assert.equal((await store.oldestPending())?.id, second?.id);
    await store.markUndelivered(second?.id ?? -1, 'no session', 21);
    assert.equal(await store.oldestPending(), undefined);
    assert.deepEqual(await store.counts(), { pending: 0, delivered: 1, undelivered: 1 });
    assert.deepEqual(
      (await store.recent('undelivered')).map((e) => [e.messageId, e.error, e.attempts]),
      [['m2', 'no session', 1]],
    );
  });

  test('trims settled events beyond the newest kept, never a pending one', async () => {
    const store = new WakeEventStore((await fresh()).db);
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await store.insert(event(`m${i}`, i)))?.id ?? -1);
    for (const id of ids.slice(0, 4)) await store.markDelivered(id, 'eng-1', 'origin', 100);
    await store.trim(2);
    assert.deepEqual(
      (await store.recent('delivered')).map((e) => e.messageId),
      ['m3', 'm2'],
    );
    assert.deepEqual(await store.counts(), { pending: 1, delivered: 2, undelivered: 0 });
  });
});
