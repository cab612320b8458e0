import { z } from 'zod';
import type { NodeListing } from '../cluster/node-listing.ts';
import { formatDuration } from './format.ts';
import { defineOperation } from './operation.ts';

/** The nodes of the cluster, one line each: `🟢 name (self) — 2/5 running · labels gpu,linux · heartbeat 3s ago`. */
export function formatNodes(nodes: readonly NodeListing[], now: number): string {
  if (nodes.length === 0) return 'No nodes.';
  return nodes
    .map((n) => {
      const icon = n.status === 'up' ? '🟢' : '🔴';
      const labels = n.labels.length > 0 ? ` · labels ${n.labels.join(',')}` : '';
      const age = formatDuration(Math.max(0, now - n.lastHeartbeat));
      return `${icon} ${n.name}${n.self ? ' (this node)' : ''} — ${n.status}, ${n.running}/${n.capacity} running${labels} · heartbeat ${age} ago`;
    })
    .join('\n');
}

/** The nodes sharing this daemon's database: name, labels, capacity, running sessions, last heartbeat, up or down. */
export const nodesOperation = defineOperation({
  name: 'nodes',
  summary: 'List the nodes of the cluster: labels, capacity, running sessions, last heartbeat, up or down',
  input: z.strictObject({}),
  needs: ['cluster'],
  expose: {
    tool: 'cluster_nodes',
    command: { name: 'nodes', positional: [], usage: '/nodes' },
    rpc: 'nodes.list',
    cli: { name: 'nodes', args: [] },
  },
  async run(ctx): Promise<{ nodes: NodeListing[]; now: number }> {
    return { nodes: await ctx.services.cluster.nodes(), now: ctx.services.clock.now() };
  },
  format: (result) => formatNodes(result.nodes, result.now),
});
