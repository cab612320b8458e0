// A node declared down while it ran serves `primary` again once it rejoined: the group is restartable (the engine
// starts again in the same process, restoring from its logs), and its fenced writes follow the node's current
// incarnation (the run before stays refused).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { chatMessage, engineFixture } from '../../test/support/engine-fixture.ts';
import { BEAT_MS, NODE_TIMEOUT_MS, silence, testNode } from '../../test/support/test-nodes.ts';
import { silentLogger } from '../core/logger.ts';
import { FencedError, leaseFence } from '../store/cluster-fence.ts';
import { OutboxStore } from '../store/outbox-store.ts';
import { ServiceGroup } from './service-group.ts';

const entry = { targetKey: 'chat|1', target: '{"channel":"chat","chat":"1"}', channel: 'chat', text: 'reply' };

describeEachDatabase('a node that rejoined the cluster', (fresh) => {
  it('takes primary again when its holder leaves, and its engine answers again', async () => {
    const { db, dialect } = await fresh();
    // The engine over the test's database (closed by the suite, not by the fixture).
    const fx = await engineFixture({ noStart: true, open: () => ({ db, dialect, close: async () => {} }) });
    const { clock, engine } = fx;
    const a = testNode(db, clock, 'a');
    const b = testNode(db, clock, 'b');
    try {
      const primary = new ServiceGroup({ logger: silentLogger(), restartable: true });
      primary.add('engine', { start: () => engine.start(), stop: () => engine.stop() });
      a.singletons.add('primary', primary);
      const onB: string[] = [];
      b.singletons.add('primary', {
        start: async () => void onB.push('start'),
        stop: async () => void onB.push('stop'),
      });
      await a.start();
      await b.start();
      assert.deepEqual(a.singletons.served(), ['primary']);
      const first = a.incarnation;
      const lock = dialect === 'postgres';
      const current = new OutboxStore(
        db,
        leaseFence({ name: 'primary', node: 'a', incarnation: () => a.incarnation, lock }),
      );
      const before = new OutboxStore(db, leaseFence({ name: 'primary', node: 'a', incarnation: first, lock }));
      await engine.acceptUserMessage(chatMessage('id1', 'm1'));
      await engine.idle();

      // a stalls: b declares it down and serves primary; a's next beat fences it (the engine stops) and it rejoins.
      await silence(clock, [b], NODE_TIMEOUT_MS + BEAT_MS);
      assert.deepEqual(onB, ['start']);
      await a.beat();
      assert.equal(a.state, 'up');
      assert.notEqual(a.incarnation, first);
      assert.deepEqual(a.singletons.served(), []);
      await assert.rejects(engine.acceptUserMessage(chatMessage('id2', 'm2')), /stopped/);
      await silence(clock, [a, b], 2 * BEAT_MS);
      assert.deepEqual([a.singletons.served(), b.singletons.served()], [[], ['primary']]);

      // The holder leaves: a takes primary again (not retired), and its engine restores and answers.
      await b.stop();
      await a.beat();
      assert.deepEqual(a.singletons.served(), ['primary']);
      assert.deepEqual(primary.running(), ['engine']);
      const next = await engine.acceptUserMessage(chatMessage('id3', 'm3'));
      await engine.idle();
      assert.deepEqual(
        fx.outbox.deliveries.map((m) => [m.text, m.replyTo]),
        [
          ['echo: m1', 'id1'],
          ['echo: m3', 'id3'],
        ],
      );
      assert.deepEqual(
        fx.inference.requests.at(-1)?.messages.map((m) => m.content),
        ['m1', 'echo: m1', 'm3'],
        'the restored session keeps its history',
      );
      assert.equal(next.duplicate, false);

      // Fenced writes pass under the current incarnation; the run before stays refused.
      const id = await current.enqueue(entry, clock.now());
      assert.ok(id !== null);
      await current.claim(id, clock.now());
      await current.unclaim(id, clock.now());
      await assert.rejects(before.claim(id, clock.now()), FencedError);
    } finally {
      await a.stop();
      await fx.close();
    }
  });
});
