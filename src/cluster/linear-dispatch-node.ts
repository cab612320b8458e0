// Linear dispatches across the nodes of a cluster on PostgreSQL (built in src/main.ts): the dispatch pipeline runs on
// every node for the dispatches that node claimed, while the intake (webhooks, router) stays in the `primary`
// singleton. A node looks for dispatches to claim when one is queued, released or finished (NOTIFY of migration 850),
// when the LISTEN connection comes back, and on the heartbeat as a fallback; a lost node's unfinished dispatches are
// released in its takeover, for the nodes that can run them. The pipeline is passed in by shape (cluster/ imports only
// store/ and core/).
import type { Clock } from '../core/clock.ts';
import type { Config, HarnessName } from '../core/config.ts';
import type { Notices } from '../core/notices.ts';
import { followChannel } from '../core/notices.ts';
import { LINEAR_DISPATCH_CHANNEL } from '../store/cluster-migrations.ts';
import type { ClusterNodeStore } from '../store/cluster-nodes.ts';
import type { Claimant } from '../store/linear-dispatches.ts';
import type { TakeoverStep } from './cluster-node.ts';

/** What of the pipeline this node drives. */
export interface NodePipeline {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Looks for dispatches to claim and stops to apply now. */
  kick(): void;
  /** Releases a lost node's unfinished dispatches; resolves with their ids. */
  releaseNode(node: string): Promise<string[]>;
}

/** The placement of this node, as the pipeline takes it (linear/pipeline/placement.ts DispatchPlacement). */
export interface NodePlacement {
  claimant: Claimant;
  maxSessions: number;
  nodes(): Promise<readonly { name: string; workspaces: readonly string[]; harnesses: readonly string[] }[]>;
}

/** This node's placement: its name, workspaces and harnesses, its `maxSessions`, and the cluster's nodes. */
export function nodePlacement(
  config: Config,
  harnesses: readonly HarnessName[],
  nodes: ClusterNodeStore,
): NodePlacement {
  return {
    claimant: { node: config.node.name, workspaces: config.workspaces, harnesses },
    maxSessions: config.maxSessions,
    nodes: () => nodes.list(),
  };
}

/** How LinearDispatchNode is built. */
export interface LinearDispatchNodeDeps {
  pipeline: NodePipeline;
  /** The node's LISTEN connection (started and stopped by its owner). */
  listener: Notices;
  cluster: { onNodeDown(name: string, step: TakeoverStep): void };
  clock: Clock;
  /** How often the node looks for dispatches unasked (ms): the heartbeat. */
  heartbeatMs: number;
}

/** The pipeline run on this node of the cluster: started after the sessions are restored, woken by the cluster. */
export class LinearDispatchNode {
  readonly #d: LinearDispatchNodeDeps;
  #stopFollowing: (() => void) | null = null;

  /** Registers the takeover step `linear` (after `sessions`: register it later). */
  constructor(deps: LinearDispatchNodeDeps) {
    this.#d = deps;
    deps.cluster.onNodeDown('linear', async (node) => {
      await deps.pipeline.releaseNode(node.name);
    });
  }

  /**
   * Starts the pipeline (recovering this node's dispatches, claiming what it can), then looks again at each notice,
   * reconnect and heartbeat.
   */
  async start(): Promise<void> {
    const { pipeline, listener, clock, heartbeatMs } = this.#d;
    await pipeline.start();
    const kick = (): void => pipeline.kick();
    this.#stopFollowing = followChannel(
      listener,
      LINEAR_DISPATCH_CHANNEL,
      { notice: kick, all: kick },
      clock,
      heartbeatMs,
    );
  }

  /** Stops looking and stops the pipeline (its sessions are left to the SessionManager). */
  async stop(): Promise<void> {
    this.#stopFollowing?.();
    this.#stopFollowing = null;
    await this.#d.pipeline.stop();
  }
}
