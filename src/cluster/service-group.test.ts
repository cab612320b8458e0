import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { testNode } from '../../test/support/test-nodes.ts';
import { ManualClock } from '../core/clock.ts';
import { silentLogger } from '../core/logger.ts';
import { ServiceGroup } from './service-group.ts';

/** A member that writes its starts and stops to `trace`; `failStart` makes its start throw. */
function member(trace: string[], name: string, failStart = false): { start(): Promise<void>; stop(): Promise<void> } {
  return {
    async start() {
      if (failStart) throw new Error(`${name} failed`);
      trace.push(`start ${name}`);
    },
    async stop() {
      trace.push(`stop ${name}`);
    },
  };
}

it('starts its members in order, stops them in reverse, each at most once per start', async () => {
  const trace: string[] = [];
  const group = new ServiceGroup({ logger: silentLogger(), restartable: false });
  for (const name of ['outbox', 'engine', 'connector']) group.add(name, member(trace, name));
  await group.start();
  assert.deepEqual(group.running(), ['outbox', 'engine', 'connector']);
  await group.stopMember('engine');
  await group.stopMember('engine');
  await group.stop();
  assert.deepEqual(trace, [
    'start outbox',
    'start engine',
    'start connector',
    'stop engine',
    'stop connector',
    'stop outbox',
  ]);
  await assert.rejects(group.start(), /served once already/);
});

it('a restartable group starts its members again after a stop (a node serving primary again after a rejoin)', async () => {
  const trace: string[] = [];
  const group = new ServiceGroup({ logger: silentLogger(), restartable: true });
  for (const name of ['outbox', 'engine']) group.add(name, member(trace, name));
  await group.start();
  await group.stop();
  await group.start();
  assert.deepEqual(group.running(), ['outbox', 'engine']);
  assert.deepEqual(trace, [
    'start outbox',
    'start engine',
    'stop engine',
    'stop outbox',
    'start outbox',
    'start engine',
  ]);
});

it('stops what it started when a member fails to start, and keeps the error', async () => {
  const trace: string[] = [];
  const group = new ServiceGroup({ logger: silentLogger(), restartable: true });
  group.add('outbox', member(trace, 'outbox'));
  group.add('engine', member(trace, 'engine', true));
  await assert.rejects(group.start(), /engine failed/);
  assert.deepEqual(trace, ['start outbox', 'stop outbox']);
  assert.match(String(group.failure), /engine failed/);
});

describeEachDatabase('one-shot singletons', (fresh) => {
  it('a group that cannot restart gives its lease up for good once stopped; a restart of the node takes it back', async () => {
    const { db } = await fresh();
    const clock = new ManualClock();
    const trace: string[] = [];
    const a = testNode(db, clock, 'a', { maxSessions: 1 });
    const groupA = new ServiceGroup({ logger: silentLogger(), restartable: false });
    groupA.add('engine', member(trace, 'engine@a'));
    a.singletons.add('primary', groupA);
    await a.start();
    assert.deepEqual(a.singletons.served(), ['primary']);

    // The node restarts under its name (its previous run died): the new run takes the lease back at once.
    const a2 = testNode(db, clock, 'a', { maxSessions: 1 });
    const groupA2 = new ServiceGroup({ logger: silentLogger(), restartable: false });
    groupA2.add('engine', member(trace, 'engine@a2'));
    a2.singletons.add('primary', groupA2);
    await a2.start();
    assert.deepEqual(a2.singletons.served(), ['primary']);
    // The old run learns at its next beat that its name was taken and stops serving.
    await a.beat();
    assert.equal(a.fenced, true);
    assert.deepEqual(a.singletons.served(), []);
    assert.deepEqual(trace, ['start engine@a', 'start engine@a2', 'stop engine@a']);
    await a2.stop();
    assert.deepEqual(trace.at(-1), 'stop engine@a2');
  });
});
