// A node's claims of Linear dispatches over a real store (both databases): only while it has free session slots,
// released dispatches before queued ones, only what it can run; and the stops recorded by another node applied to the
// sessions running here.
import assert from 'node:assert/strict';
import { beforeEach, it } from 'node:test';
import { describeEachDatabase } from '../../../test/support/databases.ts';
import { newDispatchIn } from '../../../test/support/dispatch-record.ts';
import type { Session } from '../../coding/session.ts';
import { ManualClock } from '../../core/clock.ts';
import { silentLogger } from '../../core/logger.ts';
import { DispatchStore } from '../../store/linear-dispatches.ts';
import type { ClaimKind } from './node-claims.ts';
import { NodeClaims } from './node-claims.ts';

/** A live session as NodeClaims reads it (id and whether it is active). */
function live(id: string, isActive = true): Session {
  return { id, isActive } as unknown as Session;
}

describeEachDatabase('NodeClaims', (fresh) => {
  let store: DispatchStore;
  let running: Session[];
  let killed: string[];
  let claims: NodeClaims;
  let claimed: [string, ClaimKind][];
  const clock = new ManualClock(1_000);
  const run = (d: { id: string }, kind: ClaimKind): void => void claimed.push([d.id, kind]);

  beforeEach(async () => {
    store = new DispatchStore((await fresh()).db);
    running = [];
    killed = [];
    claimed = [];
    claims = new NodeClaims({
      store,
      placement: {
        claimant: { node: 'a', workspaces: ['/w'], harnesses: ['claude'] },
        maxSessions: 2,
        nodes: async () => [],
      },
      sessions: {
        liveSessions: () => running,
        kill: async (id: string) => {
          killed.push(id);
          running = running.filter((s) => s.id !== id);
          return (await Promise.resolve(null)) as never;
        },
      },
      watch: { unwatch: () => undefined },
      clock,
      logger: silentLogger(),
    });
  });

  it('claims released dispatches first, then queued ones it can run, while it has free session slots', async () => {
    await store.insert(newDispatchIn('lost', '/w/r3', 0));
    await store.claimNextQueued(10, 5, { node: 'b', workspaces: ['/w'], harnesses: ['claude'] });
    await store.insert(newDispatchIn('q1', '/w/r', 1));
    await store.insert(newDispatchIn('q2', '/w/r2', 2));
    await store.insert(newDispatchIn('other', '/elsewhere', 3));
    await store.releaseNode('b', 6);
    running = [live('s1', false)];
    await claims.pass(10, run);
    assert.deepEqual(claimed, [
      ['lost', 'released'],
      ['q1', 'queued'],
    ]);
    assert.equal(claims.freeSlots(), 0, 'two claims wait for their sessions');
    claims.settled('lost');
    running = [live('s2')];
    await claims.pass(10, run);
    assert.deepEqual(claimed.length, 2, 'the settled claim runs a session now: still no free slot');
    running = [];
    await claims.pass(10, run);
    assert.deepEqual(claimed.at(-1), ['q2', 'queued']);
    assert.equal((await store.get('other'))?.status, 'queued', 'not this node’s to run');
    assert.equal((await store.get('q2'))?.node, 'a');
  });

  it('kills a session here whose dispatch another node stopped, once', async () => {
    await store.insert(newDispatchIn('d1', '/w/r', 1));
    const d = await store.claimNextQueued(10, 2, { node: 'a', workspaces: ['/w'], harnesses: ['claude'] });
    assert.ok(d);
    await store.compareAndSwap('d1', 'dispatched', 'working', 3);
    await store.addSession({ sessionId: 's1', dispatchId: 'd1', phase: 'worker', attempt: 1, try: 1, startedAt: 3 });
    running = [live('s1'), live('unrelated')];
    await claims.pass(10, run);
    assert.deepEqual(killed, [], 'nothing stopped yet');
    await store.compareAndSwap('d1', 'working', 'stopped', 4, { patch: { stopRequested: true } });
    await claims.pass(10, run);
    assert.deepEqual(killed, ['s1']);
    assert.equal((await store.session('s1'))?.endCause, 'stop');
    await claims.pass(10, run);
    assert.deepEqual(killed, ['s1'], 'once');
  });
});
