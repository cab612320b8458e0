// Cluster nodes for the rejoin tests: nodes on one database whose heartbeat runs only when the test calls `beat`, and
// time passing a beat at a time with only some nodes beating (the others stalled).
import type { Kysely } from 'kysely';
import { ClusterNode } from '../../src/cluster/cluster-node.ts';
import type { ManualClock } from '../../src/core/clock.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { LeaseStore } from '../../src/store/cluster-leases.ts';
import { ClusterNodeStore } from '../../src/store/cluster-nodes.ts';
import type { Database } from '../../src/store/tables/index.ts';

/** `cluster.nodeTimeoutSec` of the test nodes, in milliseconds. */
export const NODE_TIMEOUT_MS = 15_000;
/** How far `silence` moves the clock between beats. */
export const BEAT_MS = 3_000;
let runs = 0;

/** A node named `name` on `db` beating only when the test calls `beat`; each run (and rejoin) a fresh incarnation. */
export function testNode(db: Kysely<Database>, clock: ManualClock, name: string): ClusterNode {
  return new ClusterNode({
    store: new ClusterNodeStore(db),
    leases: new LeaseStore(db),
    clock,
    logger: silentLogger(),
    name,
    incarnation: `${name}-run${(runs += 1)}`,
    newIncarnation: () => `${name}-run${(runs += 1)}`,
    labels: [],
    harnesses: ['claude'],
    workspaces: ['/work'],
    maxSessions: 3,
    url: null,
    timeoutMs: NODE_TIMEOUT_MS,
    heartbeatMs: 1e12,
    runningByNode: async () => new Map(),
  });
}

/** Lets `ms` pass a beat at a time, with only `beating` beating; resolves after their last beat. */
export async function silence(clock: ManualClock, beating: readonly ClusterNode[], ms: number): Promise<void> {
  for (let t = 0; t < ms; t += BEAT_MS) {
    clock.advance(BEAT_MS);
    for (const n of beating) await n.beat();
  }
}
