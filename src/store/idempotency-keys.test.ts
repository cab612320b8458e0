import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Transaction } from 'kysely';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { storedSession } from '../../test/support/stored-session.ts';
import { ClusterNodeStore } from './cluster-nodes.ts';
import { CodingSessionStore } from './coding-sessions.ts';
import { IdempotencyKeyStore } from './idempotency-keys.ts';
import type { Database } from './tables/index.ts';

describeEachDatabase('IdempotencyKeyStore', (fresh) => {
  test('claims a key once per process: a repeat while it runs is in progress; after it is done, the answer is replayed', async () => {
    const keys = new IdempotencyKeyStore((await fresh()).db, 'proc-1');
    assert.deepEqual(await keys.claim('hooks:wake', 'k', 'h1', 1), { kind: 'new' });
    assert.deepEqual(await keys.claim('hooks:wake', 'k', 'h1', 2), { kind: 'in-progress' });
    assert.deepEqual(await keys.claim('hooks:wake', 'k', 'h2', 2), { kind: 'mismatch' });
    assert.deepEqual(
      await keys.claim('rpc:sessions.launch', 'k', 'h2', 2),
      { kind: 'new' },
      'scoped per caller and method',
    );
    await keys.complete('hooks:wake', 'k', '{"ok":true}', 3);
    assert.deepEqual(await keys.claim('hooks:wake', 'k', 'h1', 4), { kind: 'replay', response: '{"ok":true}' });
  });

  test('a claim left by a process that died is taken over once; a released claim is new again; prune forgets old keys', async () => {
    const { db } = await fresh();
    await new IdempotencyKeyStore(db, 'dead').claim('hooks:wake', 'k', 'h', 1);
    const keys = new IdempotencyKeyStore(db, 'alive');
    assert.deepEqual(await keys.claim('hooks:wake', 'k', 'h', 2), { kind: 'taken-over' });
    assert.deepEqual(await keys.claim('hooks:wake', 'k', 'h', 3), { kind: 'in-progress' }, 'now this process runs it');
    await keys.release('hooks:wake', 'k');
    assert.deepEqual(await keys.claim('hooks:wake', 'k', 'h', 4), { kind: 'new' });
    await keys.complete('hooks:wake', 'k', '1', 5);
    await keys.release('hooks:wake', 'k');
    assert.equal((await keys.claim('hooks:wake', 'k', 'h', 6)).kind, 'replay', 'a done key is not released');
    assert.equal(await keys.prune(5), 1);
    assert.deepEqual(await keys.claim('hooks:wake', 'k', 'h', 7), { kind: 'new' });
  });

  test('a claim of another node that is up is in progress there; once that node is down it is taken over', async () => {
    const { db } = await fresh();
    const nodes = new ClusterNodeStore(db);
    const join = { labels: [], harnesses: [], workspaces: [], maxSessions: 1, url: null, startedAt: 1 };
    await nodes.join({ ...join, name: 'a', incarnation: 'inc-a' }, 1);
    await nodes.join({ ...join, name: 'b', incarnation: 'inc-b' }, 1);
    await new IdempotencyKeyStore(db, 'inc-a').claim('rpc:sessions.launch', 'k', 'h', 1);
    const onB = new IdempotencyKeyStore(db, 'inc-b');
    assert.deepEqual(await onB.claim('rpc:sessions.launch', 'k', 'h', 2), { kind: 'in-progress' });
    assert.equal((await nodes.markStale(10, 20, 'b')).length, 1);
    assert.deepEqual(await onB.claim('rpc:sessions.launch', 'k', 'h', 21), { kind: 'taken-over' });
  });

  test('claims of one key at once: exactly one runs it, a new key or one taken over from a dead process', async () => {
    const { db } = await fresh();
    const keys = new IdempotencyKeyStore(db, 'alive');
    const fresh2 = await Promise.all([keys.claim('rpc:x', 'k1', 'h', 1), keys.claim('rpc:x', 'k1', 'h', 1)]);
    assert.deepEqual(fresh2.map((c) => c.kind).sort(), ['in-progress', 'new']);
    await new IdempotencyKeyStore(db, 'dead').claim('rpc:x', 'k2', 'h', 1);
    const taken = await Promise.all([keys.claim('rpc:x', 'k2', 'h', 2), keys.claim('rpc:x', 'k2', 'h', 2)]);
    assert.deepEqual(taken.map((c) => c.kind).sort(), ['in-progress', 'taken-over']);
  });
});

describeEachDatabase('IdempotencyKeyStore.atomically', (fresh) => {
  test('records an answer in the transaction of an effect: both commit, or neither', async () => {
    const { db } = await fresh();
    const keys = new IdempotencyKeyStore(db, 'proc');
    await keys.claim('hooks:wake', 'a', 'h', 1);
    await keys.claim('hooks:wake', 'b', 'h', 1);
    const effect = (trx: Transaction<Database>, text: string) =>
      trx.insertInto('heartbeat_events').values({ text, source: 'hook', created_at: 2 }).execute();
    await keys.atomically(async (trx) => {
      await effect(trx, 'a');
      await keys.complete('hooks:wake', 'a', '"a"', 2, trx);
    });
    await assert.rejects(
      keys.atomically(async (trx) => {
        await effect(trx, 'b');
        await keys.complete('hooks:wake', 'b', '"b"', 2, trx);
        throw new Error('the effect failed');
      }),
      /the effect failed/,
    );
    assert.deepEqual(await keys.claim('hooks:wake', 'a', 'h', 3), { kind: 'replay', response: '"a"' });
    assert.deepEqual(
      await keys.claim('hooks:wake', 'b', 'h', 3),
      { kind: 'in-progress' },
      'rolled back with its effect',
    );
    assert.deepEqual(
      (await db.selectFrom('heartbeat_events').select('text').execute()).map((r) => r.text),
      ['a'],
    );
  });
});

describeEachDatabase('a keyed launch', (fresh) => {
  test("records the launch's answer in the transaction that stores the session: both commit, or neither", async () => {
    const { db } = await fresh();
    const keys = new IdempotencyKeyStore(db, 'proc');
    const sessions = new CodingSessionStore(db);
    await keys.claim('rpc:sessions.launch', 'a', 'h', 1);
    await keys.claim('rpc:sessions.launch', 'b', 'h', 1);
    await sessions.insertLaunched(storedSession({ id: 's-a', name: 'a' }), 2, (trx) =>
      keys.complete('rpc:sessions.launch', 'a', '"a"', 2, trx),
    );
    await assert.rejects(
      sessions.insertLaunched(storedSession({ id: 's-b', name: 'b' }), 2, async (trx) => {
        await keys.complete('rpc:sessions.launch', 'b', '"b"', 2, trx);
        throw new Error('the launch failed after its answer was written');
      }),
    );
    assert.deepEqual(await keys.claim('rpc:sessions.launch', 'a', 'h', 3), { kind: 'replay', response: '"a"' });
    assert.deepEqual(
      await keys.claim('rpc:sessions.launch', 'b', 'h', 3),
      { kind: 'in-progress' },
      'rolled back with the session',
    );
    assert.equal(await sessions.get('s-b'), null, 'no session b');
  });
});
