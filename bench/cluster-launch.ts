// Launches per second across a cluster of 1, 2 and 3 nodes (real daemon processes on one PostgreSQL, the fake Claude
// Code CLI): N launches posted to the nodes' gateways in turn (as a load balancer would) until every session has
// ended, beside the bare platform in the same run: this process spawning the same fake N times with as many at once as
// the cluster's capacity. On one small machine the nodes share its cores, so this shows the cluster's overhead, not
// the scaling a node per machine gives.
// Run: npm run bench:cluster-launch   (or: node bench/cluster-launch.ts [launches=60] [maxSessions per node=10])
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startClusterRig } from '../test/support/cluster-rig.ts';
import { tempDir } from '../test/support/temp-dir.ts';
import { printTable } from './stats.ts';
import { bareRelay } from './support/bare-relay.ts';

const launches = Number(process.argv[2] ?? 60);
const perNode = Number(process.argv[3] ?? 10);

interface Listed {
  status: string;
}

/** Launches `launches` sessions across `nodes` nodes; resolves with the milliseconds until all have ended. */
async function clusterRun(nodes: number): Promise<number> {
  const names = Array.from({ length: nodes }, (_, i) => `node-${i + 1}`);
  const rig = await startClusterRig(
    'sb-bench-cluster-launch-',
    names.map((name) => ({ name, maxSessions: perNode })),
    { config: { log: { level: 'silent' }, maxPersistedSessions: launches * 2 } },
  );
  try {
    const workdir = join(rig.workspace, 'w');
    mkdirSync(workdir, { recursive: true });
    const started = performance.now();
    let next = 0;
    // As many in flight as the cluster has slots; a launch refused at capacity is posted again.
    await Promise.all(
      Array.from({ length: nodes * perNode }, async (_, lane) => {
        while (next < launches) {
          const i = next;
          next += 1;
          for (;;) {
            const node = rig.node(names[(i + lane) % nodes] as string);
            try {
              const { id } = await node.rpc<{ id: string }>('sessions.launch', {
                prompt: `bench ${i}`,
                workdir,
                multiTurnDisabled: true,
              });
              for (;;) {
                const session = await node.rpc<Listed>('sessions.get', { session: id });
                if (!['queued', 'starting', 'running'].includes(session.status)) break;
                await new Promise((resolve) => setTimeout(resolve, 20));
              }
              break;
            } catch (error) {
              if (!/maxSessions|capacity/.test(String(error))) throw error;
              await new Promise((resolve) => setTimeout(resolve, 20));
            }
          }
        }
      }),
    );
    return performance.now() - started;
  } finally {
    await rig.stop();
  }
}

const dir = tempDir('sb-bench-cluster-bare-');
try {
  const rows: (string | number)[][] = [];
  await bareRelay(dir.path, 10);
  for (const nodes of [1, 2, 3]) {
    const bareMs = await bareRelay(dir.path, launches, nodes * perNode);
    const clusterMs = await clusterRun(nodes);
    rows.push([`bare relay, ${nodes * perNode} at once`, String(launches), bareMs, (launches / bareMs) * 1000, '']);
    rows.push([
      `${nodes} node${nodes === 1 ? '' : 's'} × maxSessions ${perNode}`,
      String(launches),
      clusterMs,
      (launches / clusterMs) * 1000,
      `${(clusterMs / bareMs).toFixed(2)}× bare`,
    ]);
  }
  console.log(`cluster launches: ${launches} fake Claude Code sessions, each until it ended, node ${process.version}`);
  printTable(['path', 'launches', 'total ms', 'launches/s', 'vs bare'], rows);
} finally {
  dir.remove();
}
