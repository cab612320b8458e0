// A node declared down while it ran (a stall, SIGSTOP): its writes fenced by the `primary` lease are refused at once,
// it stops its singletons, runs its `leave` steps (work refused meanwhile with `unavailable: … rejoining`), waits for
// the takeover of what it left (doing it itself once owed), then rejoins under a fresh incarnation and resumes. A node
// whose name another process took stays fenced.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { BEAT_MS, NODE_TIMEOUT_MS, silence, testNode } from '../../test/support/test-nodes.ts';
import { ManualClock } from '../core/clock.ts';
import { AppError } from '../core/errors.ts';
import { FencedError, leaseFence } from '../store/cluster-fence.ts';
import { ClusterNodeStore } from '../store/cluster-nodes.ts';
import { OutboxStore } from '../store/outbox-store.ts';

const TIMEOUT = NODE_TIMEOUT_MS;
const BEAT = BEAT_MS;
const node = testNode;

const entry = { targetKey: 'chat|1', target: '{"channel":"chat","chat":"1"}', channel: 'chat', text: 'reply' };

describeEachDatabase('a node declared down while alive', (fresh) => {
  it('is fenced at once, leaves, and rejoins under a fresh incarnation once taken over', async () => {
    const { db, dialect } = await fresh();
    const clock = new ManualClock();
    const a = node(db, clock, 'a');
    const b = node(db, clock, 'b');
    const events: string[] = [];
    a.singletons.add('primary', {
      start: async () => void events.push('a:primary start'),
      stop: async () => void events.push('a:primary stop'),
      restartable: false,
    });
    b.singletons.add('primary', { start: async () => void events.push('b:primary start'), stop: async () => {} });
    a.onRejoin('sessions', {
      leave: async () => {
        assert.throws(() => a.assertServing(), /unavailable: node a is rejoining the cluster/);
        events.push('a:leave');
      },
      resume: async () => void events.push('a:resume'),
    });
    b.onNodeDown('sessions', async (down) => void events.push(`b:takeover ${down.name}`));
    await a.start();
    await b.start();
    const first = a.incarnation;
    const claims = new OutboxStore(
      db,
      leaseFence({ name: 'primary', node: 'a', incarnation: first, lock: dialect === 'postgres' }),
    );
    const id = await claims.enqueue(entry, clock.now());
    assert.ok(id !== null);
    await claims.claim(id, clock.now());
    await claims.unclaim(id, clock.now());

    // a stalls: b declares it down and takes primary; a's in-flight claim, run on resuming, is refused.
    await silence(clock, [b], TIMEOUT + BEAT);
    // (b may take the expired lease in the beat before the one that declares a down.)
    assert.deepEqual([...events].sort(), ['a:primary start', 'b:primary start', 'b:takeover a']);
    await assert.rejects(claims.claim(id, clock.now()), FencedError);
    assert.equal((await claims.get(id))?.status, 'pending');

    // Its next beat: singletons stopped (primary retired here), leave, rejoin, resume; primary stays on b.
    await a.beat();
    assert.deepEqual(events.slice(3), ['a:primary stop', 'a:leave', 'a:resume']);
    assert.equal(a.state, 'up');
    assert.notEqual(a.incarnation, first);
    a.assertServing();
    const listed = await b.nodes();
    assert.deepEqual(
      listed.map((n) => [n.name, n.status]),
      [
        ['a', 'up'],
        ['b', 'up'],
      ],
    );
    await silence(clock, [a, b], 2 * BEAT);
    assert.deepEqual(a.singletons.served(), []);
    assert.deepEqual(b.singletons.served(), ['primary']);
    await assert.rejects(claims.claim(id, clock.now()), FencedError, 'the old run stays fenced after the rejoin');
    await a.stop();
    await b.stop();
  });

  it('waits for a takeover its taker left unfinished, then does it itself', async () => {
    const { db } = await fresh();
    const clock = new ManualClock();
    const a = node(db, clock, 'a');
    const takeovers: string[] = [];
    a.onNodeDown('sessions', async (down) => void takeovers.push(down.incarnation));
    await a.start();
    const first = a.incarnation;
    // Declared down by a taker that died before taking it over.
    const store = new ClusterNodeStore(db);
    clock.advance(TIMEOUT + 1);
    assert.equal((await store.markStale(clock.now() - TIMEOUT, clock.now(), 'x')).length, 1);
    await a.beat();
    assert.equal(a.state, 'rejoining');
    assert.throws(
      () => a.assertServing(),
      (error: unknown) => error instanceof AppError && error.kind === 'unavailable',
    );
    assert.equal(a.incarnation, first);
    clock.advance(TIMEOUT + 1);
    await a.beat();
    assert.deepEqual(takeovers, [first]);
    assert.equal(a.state, 'up');
    assert.notEqual(a.incarnation, first);
    await a.stop();
  });

  it('stays fenced when another process took its name', async () => {
    const { db } = await fresh();
    const clock = new ManualClock();
    const old = node(db, clock, 'a');
    const left: string[] = [];
    old.onRejoin('sessions', {
      leave: async () => void left.push('leave'),
      resume: async () => void left.push('resume'),
    });
    await old.start();
    const replacement = node(db, clock, 'a');
    await replacement.start();
    await old.beat();
    await old.beat();
    assert.equal(old.state, 'replaced');
    assert.throws(() => old.assertServing(), /was replaced by another process/);
    assert.deepEqual(left, ['leave']);
    assert.equal((await new ClusterNodeStore(db).get('a'))?.incarnation, replacement.incarnation);
    await replacement.stop();
  });
});
