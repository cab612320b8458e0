// Cluster nodes for the cluster tests: nodes on one database whose heartbeat runs only when the test calls `beat` (or
// on the clock), and time passing a beat at a time with only some nodes beating (the others stalled).
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

/** How a test node differs from the default (no labels, 3 slots, heartbeat only when the test calls `beat`). */
export interface TestNodeOptions {
  labels?: string[];
  maxSessions?: number;
  /** Beat on the clock every 3 s (default false: only when the test calls `beat`). */
  beatsItself?: boolean;
  /** What `nodes` lists as running on it (default none). */
  running?: number;
}

/**
 * A node named `name` on `db` (node timeout NODE_TIMEOUT_MS; each run, and each rejoin, a fresh incarnation), beating
 * only when the test calls `beat` unless `beatsItself`.
 */
export function testNode(
  db: Kysely<Database>,
  clock: ManualClock,
  name: string,
  options: TestNodeOptions = {},
): ClusterNode {
  const running = options.running ?? 0;
  return new ClusterNode({
    store: new ClusterNodeStore(db),
    leases: new LeaseStore(db),
    clock,
    logger: silentLogger(),
    name,
    incarnation: `${name}-run${(runs += 1)}`,
    newIncarnation: () => `${name}-run${(runs += 1)}`,
    labels: options.labels ?? [],
    harnesses: ['claude'],
    workspaces: ['/work'],
    maxSessions: options.maxSessions ?? 3,
    url: null,
    timeoutMs: NODE_TIMEOUT_MS,
    heartbeatMs: options.beatsItself ? BEAT_MS : 1e12,
    runningByNode: async () => new Map(running > 0 ? [[name, running]] : []),
  });
}

/** Lets `ms` pass a beat at a time, with only `beating` beating; resolves after their last beat. */
export async function silence(clock: ManualClock, beating: readonly ClusterNode[], ms: number): Promise<void> {
  for (let t = 0; t < ms; t += BEAT_MS) {
    clock.advance(BEAT_MS);
    for (const n of beating) await n.beat();
  }
}
