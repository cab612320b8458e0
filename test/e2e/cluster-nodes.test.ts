// Three real daemon processes share one PostgreSQL database as the nodes of a cluster: each lists all three with their
// labels and capacity, they share one gateway token, and a SIGKILLed node is listed down by the others within
// `cluster.nodeTimeoutSec` and a few seconds.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DaemonProcess } from '../support/daemon-process.ts';
import { killDaemonProcess, startDaemonProcess } from '../support/daemon-process.ts';
import type { TestPostgres } from '../support/postgres.ts';
import { postgresSkip, startPostgres } from '../support/postgres.ts';
import { tempDir } from '../support/temp-dir.ts';
import { waitFor } from '../support/wait-for.ts';

interface Listed {
  name: string;
  labels: string[];
  capacity: number;
  status: 'up' | 'down';
  self: boolean;
}

describe('a cluster of three nodes on one PostgreSQL', { skip: postgresSkip() }, () => {
  const dir = tempDir('sb-cluster-');
  let pg: TestPostgres | undefined;
  const nodes: DaemonProcess[] = [];

  before(async () => {
    pg = await startPostgres();
    const url = pg.url;
    for (const [name, labels, maxSessions] of [
      ['alpha', ['linux'], 2],
      ['beta', ['gpu', 'linux'], 3],
      ['gamma', [], 1],
    ] as const) {
      const home = join(dir.path, name);
      mkdirSync(home, { recursive: true });
      const config = {
        store: { url },
        node: { name, labels },
        cluster: { nodeTimeoutSec: 3 },
        maxSessions,
        workspaces: [dir.path],
        log: { level: 'warn' },
      };
      writeFileSync(join(home, 'config.json5'), JSON.stringify(config));
    }
    // Started one after another: the first makes the schema and the shared tokens, the others find them.
    for (const name of ['alpha', 'beta', 'gamma']) nodes.push(await startDaemonProcess(join(dir.path, name)));
  });

  after(async () => {
    for (const node of nodes) await killDaemonProcess(node);
    await pg?.stop();
    dir.remove();
  });

  it('lists every node from every node, with one shared gateway token', async () => {
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
    const gamma = nodes[2];
    await killDaemonProcess(gamma);
    for (const node of nodes.slice(0, 2)) {
      await waitFor(
        'gamma listed down',
        async () => {
          const { nodes: listed } = await node.rpc<{ nodes: Listed[] }>('nodes.list');
          return listed.find((n) => n.name === 'gamma')?.status === 'down' ? true : undefined;
        },
        10_000,
      );
    }
  });
});
