import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ManualClock } from '../core/clock.ts';
import { silentLogger } from '../core/logger.ts';
import type { PrimaryDeps } from './primary.ts';
import { addPrimaryMembers, OUTBOX_CHANNEL } from './primary.ts';
import { ServiceGroup } from './service-group.ts';

const idle = { start: async () => {}, stop: async () => {} };

/** The primary's deps with members that do nothing but count the nudges they get. */
function deps(clock: ManualClock) {
  const counts = { outbox: 0, wake: 0, cron: 0, linear: 0 };
  const handlers = new Map<string, () => void>();
  const primary: PrimaryDeps = {
    outbox: { ...idle, wake: async () => void (counts.outbox += 1) },
    engine: idle,
    rebuildEngine: null,
    scheduler: { ...idle, cron: { rearm: async () => void (counts.cron += 1) } },
    wake: { start: async () => {}, stopDelivery: async () => {}, poke: () => void (counts.wake += 1) },
    linear: { ...idle, webhooks: { worker: { notify: () => void (counts.linear += 1) } } },
    connectors: [],
    engineCalls: null,
    listener: {
      on: (channel, handler) => {
        handlers.set(channel, () => void handler(''));
        return () => handlers.delete(channel);
      },
      onConnect: () => () => {},
    },
    clock,
    logger: silentLogger(),
    pollMs: 1_000,
  };
  return { primary, counts, handlers };
}

it("tells the holder's Linear webhook worker at every poll to look for deliveries other nodes took in", async () => {
  const clock = new ManualClock();
  const { primary, counts, handlers } = deps(clock);
  const group = new ServiceGroup({ logger: silentLogger(), restartable: false });
  addPrimaryMembers(group, primary);
  await group.start();
  assert.equal(counts.linear, 0);
  clock.advance(1_000);
  assert.equal(counts.linear, 1, 'one poll, one look');
  clock.advance(2_000);
  assert.equal(counts.linear, 3);
  // An outbox notification looks at everything the poll does.
  handlers.get(OUTBOX_CHANNEL)?.();
  assert.equal(counts.linear, 4);
  assert.deepEqual([counts.outbox, counts.wake, counts.cron], [4, 4, 4]);
  await group.stop();
  clock.advance(5_000);
  assert.equal(counts.linear, 4, 'no poll once the group stopped');
});
