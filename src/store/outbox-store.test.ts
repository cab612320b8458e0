// The outbox store on both databases: keyed messages are recorded once, a conversation's queue is read in insertion
// order, claims and settling move a row through its states, a message's file is kept with it, and the counts and prunes
// see the right rows.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { FencedError, leaseFence } from './cluster-fence.ts';
import { LeaseStore } from './cluster-leases.ts';
import type { OutboxEntry } from './outbox-store.ts';
import { OutboxStore } from './outbox-store.ts';

const entry = (chat: string, text: string, dedupeKey?: string): OutboxEntry => ({
  targetKey: `chat|${chat}`,
  target: JSON.stringify({ channel: 'chat', chat }),
  channel: 'chat',
  text,
  ...(dedupeKey === undefined ? {} : { dedupeKey }),
});

describeEachDatabase('OutboxStore', (fresh) => {
  test('records a keyed message once, and an unkeyed one every time', async () => {
    const store = new OutboxStore((await fresh()).db);
    const first = await store.enqueue(entry('1', 'reply', 'turn-1'), 10);
    assert.equal(typeof first, 'number');
    assert.equal(await store.enqueue(entry('1', 'reply', 'turn-1'), 11), null, 'the key is already recorded');
    const a = await store.enqueue(entry('1', 'plain'), 12);
    const b = await store.enqueue(entry('1', 'plain'), 13);
    assert.ok(a !== null && b !== null && a !== b);
    assert.deepEqual(await store.counts(), { pending: 3, failed: 0 });
    const record = await store.get(first ?? -1);
    assert.deepEqual(record, {
      id: first,
      targetKey: 'chat|1',
      target: JSON.stringify({ channel: 'chat', chat: '1' }),
      channel: 'chat',
      text: 'reply',
      replyTo: null,
      status: 'pending',
      dedupeKey: 'turn-1',
      attempts: 0,
      partsSent: 0,
      nextAttemptAt: 10,
      lastError: null,
      createdAt: 10,
      updatedAt: 10,
      buttons: null,
      replaces: null,
      threadOf: null,
      ref: null,
      file: null,
    });
    assert.equal(await store.get(-1), null);
  });

  test('keeps the file of a message (JSON, a few MiB of text) with its row', async () => {
    const store = new OutboxStore((await fresh()).db);
    const content = `diff --git a/a b/a\n${'+ a line of a large patch, with ünïcode\n'.repeat(100_000)}`;
    const file = JSON.stringify({ name: 'worker.patch', contentType: 'text/x-diff', content });
    const id = (await store.enqueue({ ...entry('F', 'stat', 'diff-1'), file }, 1)) ?? -1;
    assert.equal((await store.get(id))?.file, file);
    assert.equal((await store.head('chat|F'))?.file, file);
  });

  test('keeps buttons and the replaced key with a message, and the ref of a keyed one in the commit that settles it', async () => {
    const store = new OutboxStore((await fresh()).db);
    const buttons = JSON.stringify([[{ label: 'Allow', command: '/approve k3x9' }]]);
    const original = (await store.enqueue({ ...entry('A', 'Allow?', 'ask-1'), buttons }, 1)) ?? -1;
    const stored = await store.get(original);
    assert.deepEqual([stored?.buttons, stored?.replaces, stored?.ref], [buttons, null, null]);
    assert.equal(await store.sentRef('ask-1', 'chat|A'), null, 'not delivered yet');

    await store.claim(original, 2);
    assert.equal(await store.sentRef('ask-1', 'chat|A'), null, 'claimed is not delivered');
    await store.markSent(original, 3, '42');
    const sent = await store.get(original);
    assert.deepEqual([sent?.status, sent?.ref, sent?.updatedAt], ['sent', '42', 3]);
    assert.equal(await store.sentRef('ask-1', 'chat|A'), '42');
    assert.equal(await store.sentRef('ask-1', 'chat|B'), null, 'another conversation cannot edit it');
    assert.equal(await store.sentRef('ask-2', 'chat|A'), null);

    const edit = (await store.enqueue({ ...entry('A', 'Allowed', 'ask-1-done'), replaces: 'ask-1' }, 4)) ?? -1;
    assert.deepEqual([(await store.get(edit))?.replaces, (await store.get(edit))?.buttons], ['ask-1', null]);
    await store.markSent(edit, 5, null);
    assert.equal(await store.sentRef('ask-1-done', 'chat|A'), null, 'a delivery without a ref keeps none');

    const dead = (await store.enqueue(entry('A', 'lost', 'ask-3'), 6)) ?? -1;
    await store.markFailed(dead, 1, 'chat not found', 7);
    assert.equal(await store.sentRef('ask-3', 'chat|A'), null, 'a dead letter has no ref');

    const unkeyed = (await store.enqueue(entry('A', 'plain'), 8)) ?? -1;
    await store.markSent(unkeyed, 9, '43');
    assert.equal(await store.get(unkeyed), null, 'an unkeyed message is still deleted when sent');
  });

  test('a conversation is read head first; claims, progress, failures and settling move the head', async () => {
    const store = new OutboxStore((await fresh()).db);
    const one = (await store.enqueue(entry('A', 'one'), 1)) ?? -1;
    const two = (await store.enqueue(entry('A', 'two', 'k-2'), 2)) ?? -1;
    await store.enqueue(entry('B', 'other'), 3);
    assert.deepEqual((await store.pendingTargets()).sort(), ['chat|A', 'chat|B']);
    assert.equal((await store.head('chat|A'))?.text, 'one');

    await store.claim(one, 5);
    assert.deepEqual(
      (await store.claimed()).map((r) => [r.id, r.status]),
      [[one, 'sending']],
    );
    assert.equal((await store.head('chat|A'))?.text, 'two', 'a claimed message is not pending');
    assert.deepEqual(await store.counts(), { pending: 3, failed: 0 }, 'claimed messages count as pending');
    await store.unclaim(one, 6);
    assert.equal((await store.head('chat|A'))?.id, one);

    await store.recordProgress(one, 2, 7);
    await store.recordFailure(one, 1, 100, 'flaky', 8);
    assert.deepEqual(await store.head('chat|A'), {
      ...(await store.get(one)),
      status: 'pending',
      partsSent: 2,
      attempts: 1,
      nextAttemptAt: 100,
      lastError: 'flaky',
      updatedAt: 8,
    });
    await store.recordProgress(one, 3, 9);
    const progressed = await store.get(one);
    assert.deepEqual([progressed?.partsSent, progressed?.attempts, progressed?.lastError], [3, 0, null]);

    await store.markSent(one, 10);
    assert.equal(await store.get(one), null, 'an unkeyed message is deleted when sent');
    await store.markSent(two, 11);
    assert.deepEqual(
      [(await store.get(two))?.status, (await store.get(two))?.updatedAt],
      ['sent', 11],
      'a keyed one is kept as sent',
    );
    assert.equal(await store.head('chat|A'), null);
    assert.deepEqual(await store.pendingTargets(), ['chat|B']);
    assert.equal(await store.enqueue(entry('A', 'two again', 'k-2'), 12), null, 'a sent key still dedupes');
  });

  test('dead letters: listed newest first, requeued once, counted, and pruned by age', async () => {
    const store = new OutboxStore((await fresh()).db);
    const ids: number[] = [];
    for (const text of ['a', 'b', 'c']) ids.push((await store.enqueue(entry('1', text), 1)) ?? -1);
    const [a = -1, b = -1, c = -1] = ids;
    await store.markFailed(a, 3, 'down', 20);
    await store.markFailed(b, 3, 'down', 30);
    await store.markFailed(c, 3, 'down', 30);
    assert.deepEqual(
      (await store.listFailed()).map((r) => r.text),
      ['c', 'b', 'a'],
    );
    assert.deepEqual(
      (await store.listFailed(1)).map((r) => r.text),
      ['c'],
    );
    assert.deepEqual(await store.counts(), { pending: 0, failed: 3 });

    assert.equal(await store.requeue(c, 40), true);
    assert.equal(await store.requeue(c, 41), false, 'no longer a dead letter');
    const requeued = await store.get(c);
    assert.deepEqual([requeued?.status, requeued?.attempts, requeued?.nextAttemptAt], ['pending', 0, 40]);

    assert.equal(await store.pruneFailed(25), 1);
    assert.deepEqual(
      (await store.listFailed()).map((r) => r.text),
      ['b'],
    );
    const kept = (await store.enqueue(entry('1', 'kept', 'key'), 50)) ?? -1;
    await store.markSent(kept, 50);
    assert.equal(await store.pruneSent(50), 0, 'settled at the bound: kept');
    assert.equal(await store.pruneSent(51), 1);
    assert.equal(
      (await store.enqueue(entry('1', 'kept', 'key'), 52)) === null,
      false,
      'a pruned key no longer dedupes',
    );
  });

  test('a claim is a compare-and-swap: of two senders of one head, one claims each part; a settled row is not claimed', async () => {
    const store = new OutboxStore((await fresh()).db);
    const id = (await store.enqueue(entry('A', 'long', 'k-long'), 1)) ?? -1;
    const [a, b] = await Promise.all([store.claim(id, 2, 0), store.claim(id, 2, 0)]);
    assert.deepEqual([a, b].sort(), [false, true], 'exactly one sender claims the first part');
    assert.equal(await store.claim(id, 3, 0), false, 'claimed already');
    await store.recordProgress(id, 1, 4);
    assert.equal(await store.claim(id, 5, 0), false, 'part 0 went out: a stale sender of it claims nothing');
    assert.equal(await store.claim(id, 5, 1), true, 'the next part is claimed');
    await store.markSent(id, 6, null);
    assert.equal(await store.claim(id, 7, 1), false, 'a sent message is never claimed again');
  });

  test("a fenced message is recorded only while the fence's lease is held; other messages go in regardless", async () => {
    const { db, dialect } = await fresh();
    const leases = new LeaseStore(db);
    const holder = { node: 'a', incarnation: 'a-1' };
    const store = new OutboxStore(db, leaseFence({ name: 'primary', ...holder, lock: dialect === 'postgres' }));
    assert.equal(await leases.acquire('primary', holder, 1, 1000), true);
    assert.equal(typeof (await store.enqueue(entry('1', 'held', 'k1'), 2, { fenced: true })), 'number');
    // Declared lost: the taker ends this node's leases. Its engine's replies are refused; a notice from the node is not.
    await leases.releaseAllOf('a');
    await assert.rejects(store.enqueue(entry('1', 'stale', 'k2'), 3, { fenced: true }), FencedError);
    assert.equal(typeof (await store.enqueue(entry('1', 'notice'), 4)), 'number');
    assert.deepEqual(await store.counts(), { pending: 2, failed: 0 }, 'the refused reply wrote nothing');
    assert.equal(typeof (await store.enqueue(entry('1', 'k2 later', 'k2'), 5)), 'number', 'nor took its key');
  });
});
