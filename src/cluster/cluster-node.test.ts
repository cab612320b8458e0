import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { NODE_TIMEOUT_MS, testNode } from '../../test/support/test-nodes.ts';
import { ManualClock } from '../core/clock.ts';
import { LeaseStore } from '../store/cluster-leases.ts';
import { ClusterSecretStore } from '../store/cluster-secrets.ts';

const TIMEOUT = NODE_TIMEOUT_MS;

/** A singleton that counts its starts and stops. */
function counter(): { starts: number; stops: number; start(): Promise<void>; stop(): Promise<void> } {
  return {
    starts: 0,
    stops: 0,
    async start() {
      this.starts += 1;
    },
    async stop() {
      this.stops += 1;
    },
  };
}

describeEachDatabase('cluster nodes', (fresh) => {
  it('lists every node with labels, capacity and status; a silent node is down and taken over once', async () => {
    const { db } = await fresh();
    const clock = new ManualClock();
    const a = testNode(db, clock, 'a', { labels: ['gpu'], beatsItself: true, running: 1 });
    const b = testNode(db, clock, 'b', { beatsItself: true, running: 1 });
    const c = testNode(db, clock, 'c', { running: 1 });
    const takenOver: string[] = [];
    for (const n of [a, b, c]) n.onNodeDown('record', async (down) => void takenOver.push(`${n.name}:${down.name}`));
    await a.start();
    await b.start();
    await c.start();
    const listed = await a.nodes();
    assert.deepEqual(
      listed.map((n) => [n.name, n.status, n.capacity, n.labels.join(','), n.self]),
      [
        ['a', 'up', 3, 'gpu', true],
        ['b', 'up', 3, '', false],
        ['c', 'up', 3, '', false],
      ],
    );
    assert.equal(listed[0]?.running, 1);

    // c goes silent (as after a SIGKILL): a and b keep beating; once its heartbeat is older than the timeout one of
    // them declares it down and takes it over, exactly once between them.
    for (let t = 0; t <= TIMEOUT + 3_000; t += 3_000) {
      clock.advance(3_000);
      await a.beat();
      await b.beat();
    }
    assert.equal(takenOver.length, 1);
    assert.match(takenOver[0] ?? '', /^[ab]:c$/);
    const after = await b.nodes();
    assert.equal(after.find((n) => n.name === 'c')?.status, 'down');
    assert.equal(after.find((n) => n.name === 'c')?.running, 0);
    // More beats do not take it over again. (Time moves a beat at a time: one jump past the timeout would leave a and b
    // each silent in the other's eyes until its own beat, and one would declare the other down.)
    for (let t = 0; t < TIMEOUT * 2; t += 3_000) {
      clock.advance(3_000);
      await a.beat();
      await b.beat();
    }
    assert.equal(takenOver.length, 1);
    // c, still running, learns at its next beat that it was declared down: it stops serving singletons and, its
    // takeover done, rejoins under a fresh incarnation (cluster-rejoin.test.ts covers the steps).
    const before = c.incarnation;
    await c.beat();
    assert.equal(c.fenced, false);
    assert.notEqual(c.incarnation, before);
    assert.equal((await a.nodes()).find((n) => n.name === 'c')?.status, 'up');
    await a.stop();
    await b.stop();
  });

  it('serves a singleton on one node at a time and moves it when its holder goes silent', async () => {
    const { db } = await fresh();
    const clock = new ManualClock();
    const a = testNode(db, clock, 'a', { running: 1 });
    const b = testNode(db, clock, 'b', { beatsItself: true, running: 1 });
    const onA = counter();
    const onB = counter();
    a.singletons.add('telegram', onA);
    b.singletons.add('telegram', onB);
    await a.start();
    await b.start();
    assert.deepEqual([onA.starts, onB.starts], [1, 0]);
    assert.deepEqual(a.singletons.served(), ['telegram']);
    // a renews while it beats: b never takes it.
    for (let i = 0; i < 10; i += 1) {
      clock.advance(3_000);
      await a.beat();
      await b.beat();
    }
    assert.deepEqual([onA.starts, onB.starts], [1, 0]);
    // a goes silent: b takes the lease once it expired (or once b declared a down), never before.
    clock.advance(TIMEOUT - 3_001);
    await b.beat();
    assert.equal(onB.starts, 0);
    clock.advance(3_002);
    await b.beat();
    assert.equal(onB.starts, 1);
    assert.deepEqual(b.singletons.served(), ['telegram']);
    // a comes back to a heartbeat: it was declared down, so it stops what it served.
    await a.beat();
    assert.equal(onA.stops, 1);
    assert.deepEqual(a.singletons.served(), []);
    await b.stop();
    assert.equal(onB.stops, 1);
  });

  it('a clean stop gives the lease up at once; a lease race has one winner', async () => {
    const { db } = await fresh();
    const clock = new ManualClock();
    const a = testNode(db, clock, 'a', { beatsItself: true, running: 1 });
    const b = testNode(db, clock, 'b', { beatsItself: true, running: 1 });
    const onB = counter();
    a.singletons.add('cron', counter());
    b.singletons.add('cron', onB);
    await a.start();
    await b.start();
    await a.stop();
    await b.beat();
    assert.equal(onB.starts, 1);
    assert.equal((await b.nodes()).find((n) => n.name === 'a')?.status, 'down');

    const leases = new LeaseStore(db);
    const now = clock.now();
    const wins = await Promise.all(
      ['x', 'y', 'z'].map((n) => leases.acquire('race', { node: n, incarnation: `${n}-1` }, now, now + TIMEOUT)),
    );
    assert.equal(wins.filter(Boolean).length, 1);
    await b.stop();
  });

  it('shares one secret across nodes: the first makes it, the others read it', async () => {
    const { db } = await fresh();
    const one = new ClusterSecretStore(db);
    const two = new ClusterSecretStore(db);
    const [x, y] = await Promise.all([one.ensure('gateway.token', 1), two.ensure('gateway.token', 2)]);
    assert.equal(x, y);
    assert.match(x, /^[0-9a-f]{64}$/);
  });
});
