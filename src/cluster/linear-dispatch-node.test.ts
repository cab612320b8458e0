// The Linear pipeline's node: it looks for dispatches on notices, reconnects and heartbeats only while the node serves;
// declared down while alive (fenced, or between a rejoin's leave and resume) it looks for nothing, and it looks again
// once the node rejoined.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../core/clock.ts';
import type { Notices } from '../core/notices.ts';
import { LINEAR_DISPATCH_CHANNEL } from '../store/cluster-migrations.ts';
import type { RejoinStep, TakeoverStep } from './cluster-node.ts';
import { LinearDispatchNode } from './linear-dispatch-node.ts';

/** A LISTEN connection whose notices and reconnects the test sends. */
class FakeNotices implements Notices {
  readonly handlers = new Map<string, ((payload: string) => void)[]>();
  readonly connects: (() => void)[] = [];

  on(channel: string, handler: (payload: string) => void): () => void {
    this.handlers.set(channel, [...(this.handlers.get(channel) ?? []), handler]);
    return () =>
      this.handlers.set(
        channel,
        (this.handlers.get(channel) ?? []).filter((h) => h !== handler),
      );
  }

  onConnect(handler: () => void): () => void {
    this.connects.push(handler);
    return () => this.connects.splice(this.connects.indexOf(handler), 1);
  }

  notify(channel: string): void {
    for (const handler of this.handlers.get(channel) ?? []) handler('');
  }
}

function setUp() {
  const kicks: string[] = [];
  const pipeline = {
    start: async () => undefined,
    stop: async () => undefined,
    kick: () => void kicks.push('kick'),
    releaseNode: async () => [],
  };
  const rejoin = new Map<string, RejoinStep>();
  const takeover = new Map<string, TakeoverStep>();
  const cluster = {
    fenced: false,
    onNodeDown: (name: string, step: TakeoverStep) => void takeover.set(name, step),
    onRejoin: (name: string, step: RejoinStep) => void rejoin.set(name, step),
  };
  const listener = new FakeNotices();
  const clock = new ManualClock();
  const node = new LinearDispatchNode({ pipeline, listener, cluster, clock, heartbeatMs: 1000 });
  return { node, kicks, cluster, rejoin, takeover, listener, clock };
}

describe('LinearDispatchNode', () => {
  it('looks for dispatches on a notice, a reconnect and a heartbeat while the node serves', async () => {
    const { node, kicks, listener, clock, takeover, rejoin } = setUp();
    assert.deepEqual([...takeover.keys()], ['linear']);
    assert.deepEqual([...rejoin.keys()], ['linear']);
    await node.start();
    listener.notify(LINEAR_DISPATCH_CHANNEL);
    for (const connect of listener.connects) connect();
    clock.advance(1000);
    assert.equal(kicks.length, 3);
    await node.stop();
    clock.advance(1000);
    assert.equal(kicks.length, 3, 'stopped: no more');
  });

  it('looks for nothing while the node is fenced or its rejoin paused it, and again once it rejoined', async () => {
    const { node, kicks, cluster, rejoin, listener, clock } = setUp();
    await node.start();
    const step = rejoin.get('linear');
    assert.ok(step);
    // The beat found the node declared down: fenced at once, then the leave steps run.
    cluster.fenced = true;
    listener.notify(LINEAR_DISPATCH_CHANNEL);
    clock.advance(1000);
    assert.equal(node.claiming, false);
    await step.leave();
    // Rejoined under a new incarnation: no longer fenced, but still paused until `resume` ran.
    cluster.fenced = false;
    listener.notify(LINEAR_DISPATCH_CHANNEL);
    assert.deepEqual(kicks, [], 'nothing while declared down');
    await step.resume();
    assert.equal(node.claiming, true);
    assert.deepEqual(kicks, ['kick'], 'resume looks at once');
    listener.notify(LINEAR_DISPATCH_CHANNEL);
    assert.deepEqual(kicks, ['kick', 'kick']);
    await node.stop();
  });
});
