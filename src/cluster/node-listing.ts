import type { HarnessName } from '../core/config.ts';
import type { NodeRecord } from '../store/cluster-nodes.ts';

/** One node as `nodes` lists it. */
export interface NodeListing {
  name: string;
  labels: string[];
  harnesses: HarnessName[];
  workspaces: string[];
  /** Its `maxSessions`. */
  capacity: number;
  /** Sessions running (or starting) on it now. */
  running: number;
  /** Epoch ms of its last heartbeat. */
  lastHeartbeat: number;
  /** `down` once declared so, or when its heartbeat is older than the timeout (not yet declared). */
  status: 'up' | 'down';
  url: string | null;
  /** True for the node that answered. */
  self: boolean;
}

/** What the `nodes` operation reads: the cluster as this node sees it. */
export interface ClusterView {
  /** This node's name. */
  readonly name: string;
  /** Every node the cluster has seen, by name. */
  nodes(): Promise<NodeListing[]>;
}

/** The listing of a node record, given its running count, now and the timeout that makes a silent node down. */
export function nodeListing(
  node: NodeRecord,
  running: number,
  options: { now: number; timeoutMs: number; self: string },
): NodeListing {
  const silent = options.now - node.heartbeatAt > options.timeoutMs;
  return {
    name: node.name,
    labels: node.labels,
    harnesses: node.harnesses,
    workspaces: node.workspaces,
    capacity: node.maxSessions,
    running: node.status === 'down' ? 0 : running,
    lastHeartbeat: node.heartbeatAt,
    status: node.status === 'down' || silent ? 'down' : 'up',
    url: node.url,
    self: node.name === options.self,
  };
}
