import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { ManualClock } from '../core/clock.ts';
import { newId } from '../core/ids.ts';
import { silentLogger } from '../core/logger.ts';
import { LeaseStore } from '../store/cluster-leases.ts';
import { ServiceGroup } from './service-group.ts';
import { Singletons } from './singletons.ts';

const LEASE = 10_000;

describeEachDatabase('a stalled holder', (fresh) => {
  it('no longer counts as serving once most of its lease passed unrenewed, before its next pass finds out', async () => {
    const { db } = await fresh();
    const clock = new ManualClock();
    const singletons = new Singletons({
      leases: new LeaseStore(db),
      holder: { node: 'a', incarnation: newId(16) },
      now: () => clock.now(),
      leaseMs: LEASE,
      logger: silentLogger(),
    });
    const group = new ServiceGroup({ logger: silentLogger(), restartable: false });
    group.add('engine', { start: async () => {}, stop: async () => {} });
    singletons.add('primary', group);
    await singletons.pass();
    assert.equal(singletons.holds('primary'), true);
    assert.deepEqual(group.running(), ['engine']);

    // Renewed in time: still fresh.
    clock.advance(LEASE * 0.5);
    await singletons.pass();
    clock.advance(LEASE * 0.5);
    assert.equal(singletons.holds('primary'), true);

    // Stalled (no pass ran) past 80% of the lease: another node may hold it by now, so the engine is not served here.
    clock.advance(LEASE * 0.4);
    assert.equal(singletons.holds('primary'), false);
    assert.deepEqual(group.running(), [], 'callers route as on a node that does not serve the group');
    assert.equal(singletons.holds('unknown'), false);
  });
});

it('a group never added to Singletons counts its running members as before', async () => {
  const group = new ServiceGroup({ logger: silentLogger(), restartable: true });
  group.add('engine', { start: async () => {}, stop: async () => {} });
  await group.start();
  assert.deepEqual(group.running(), ['engine']);
});
