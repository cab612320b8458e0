// Three real daemon processes share one PostgreSQL database as the nodes of a cluster: each lists all three with their
// labels and capacity, they share one gateway token, and a SIGKILLed node is listed down by the others within
// `cluster.nodeTimeoutSec` and a few seconds.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ClusterRig } from '../support/cluster-rig.ts';
import { startClusterRig } from '../support/cluster-rig.ts';
import { postgresSkip } from '../support/postgres.ts';
import { waitFor } from '../support/wait-for.ts';

interface Listed {
  name: string;
  labels: string[];
  capacity: number;
  status: 'up' | 'down';
  self: boolean;
}

describe('a cluster of three nodes on one PostgreSQL', { skip: postgresSkip() }, () => {
  let rig: ClusterRig | undefined;

  before(async () => {
    rig = await startClusterRig('sb-cluster-', [
      { name: 'alpha', labels: ['linux'], maxSessions: 2 },
      { name: 'beta', labels: ['gpu', 'linux'], maxSessions: 3 },
      { name: 'gamma', maxSessions: 1 },
    ]);
  });

  after(async () => {
    await rig?.stop();
  });

  it('lists every node from every node, with one shared gateway token', async () => {
    const nodes = ['alpha', 'beta', 'gamma'].map((name) => rig!.node(name));
    assert.equal(new Set(nodes.map((n) => n.token)).size, 1);
    for (const node of nodes) {
      const { nodes: listed } = await node.rpc<{ nodes: Listed[] }>('nodes.list');
      assert.deepEqual(
        listed.map((n) => [n.name, n.labels, n.capacity, n.status]),
        [
          ['alpha', ['linux'], 2, 'up'],
          ['beta', ['gpu', 'linux'], 3, 'up'],
          ['gamma', [], 1, 'up'],
        ],
      );
      assert.equal(listed.filter((n) => n.self).length, 1);
    }
  });

  it('lists a SIGKILLed node down on the others within the node timeout', async () => {
    await rig!.kill('gamma');
    for (const name of ['alpha', 'beta']) {
      await waitFor(
        'gamma listed down',
        async () => {
          const { nodes: listed } = await rig!.node(name).rpc<{ nodes: Listed[] }>('nodes.list');
          return listed.find((n) => n.name === 'gamma')?.status === 'down' ? true : undefined;
        },
        10_000,
      );
    }
  });
});
