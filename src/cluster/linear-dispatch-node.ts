// Linear dispatches across the nodes of a cluster on PostgreSQL (built in src/main.ts): the dispatch pipeline runs on
// every node for the dispatches that node claimed, while the intake (webhooks, router) stays in the `primary`
// singleton. A node looks for dispatches to claim when one is queued, released or finished (NOTIFY of migration 850),
// when the LISTEN connection comes back, and on the heartbeat as a fallback; a lost node's unfinished dispatches are
// released in its takeover, for the nodes that can run them. A node the others declared down while it ran looks for
// nothing until it rejoined (and its claims are fenced in the store besides: see nodePlacement). The pipeline is passed
// in by shape (cluster/ imports only store/ and core/).
import type { Clock } from '../core/clock.ts';
import type { Config, HarnessName } from '../core/config.ts';
import type { Notices } from '../core/notices.ts';
import { followChannel } from '../core/notices.ts';
import { fenceIdleMs } from '../store/cluster-fence.ts';
import { LINEAR_DISPATCH_CHANNEL } from '../store/cluster-migrations.ts';
import type { ClusterNodeStore } from '../store/cluster-nodes.ts';
import type { Claimant } from '../store/linear-dispatch-types.ts';
import type { ClusterNode } from './cluster-node.ts';

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

/**
 * This node's placement: its name, workspaces and harnesses, its `maxSessions`, and the cluster's nodes. Its claims are
 * fenced with the incarnation this node joined under through `nodes` (the ClusterNode's store): a claim commits only
 * while this node's row is `up` under this run, so a node declared down while alive claims nothing until it rejoined
 * (and a claim transaction left idle by a frozen node is ended by the server after half of `cluster.nodeTimeoutSec`).
 */
export function nodePlacement(
  config: Config,
  harnesses: readonly HarnessName[],
  nodes: ClusterNodeStore,
): NodePlacement {
  const node = config.node.name;
  return {
    claimant: {
      node,
      workspaces: config.workspaces,
      harnesses,
      incarnation: () => nodes.joinedAs(node),
      idleTimeoutMs: fenceIdleMs(config.cluster.nodeTimeoutSec),
    },
    maxSessions: config.maxSessions,
    nodes: () => nodes.list(),
  };
}

/** How LinearDispatchNode is built. */
export interface LinearDispatchNodeDeps {
  pipeline: NodePipeline;
  /** The node's LISTEN connection (started and stopped by its owner). */
  listener: Notices;
  /** The node: its takeover and rejoin steps, and whether it serves (`fenced` while declared down or replaced). */
  cluster: Pick<ClusterNode, 'onNodeDown' | 'onRejoin' | 'fenced'>;
  clock: Clock;
  /** How often the node looks for dispatches unasked (ms): the heartbeat. */
  heartbeatMs: number;
}

/** The pipeline run on this node of the cluster: started after the sessions are restored, woken by the cluster. */
export class LinearDispatchNode {
  readonly #d: LinearDispatchNodeDeps;
  #stopFollowing: (() => void) | null = null;
  /** True from a rejoin's `leave` to its `resume`. */
  #paused = false;

  /**
   * Registers the takeover step `linear` (after `sessions`: register it later) and the rejoin step `linear` (it pauses
   * the claims while the node is declared down, and looks again once it rejoined).
   */
  constructor(deps: LinearDispatchNodeDeps) {
    this.#d = deps;
    deps.cluster.onNodeDown('linear', async (node) => {
      await deps.pipeline.releaseNode(node.name);
    });
    deps.cluster.onRejoin('linear', {
      leave: async () => {
        this.#paused = true;
      },
      resume: async () => {
        this.#paused = false;
        this.#kick();
      },
    });
  }

  /** True while this node may look for dispatches: it serves (not fenced) and no rejoin paused it. */
  get claiming(): boolean {
    return !this.#paused && !this.#d.cluster.fenced;
  }

  /** Looks for dispatches to claim, unless the node is not serving. */
  #kick(): void {
    if (this.claiming) this.#d.pipeline.kick();
  }

  /**
   * Starts the pipeline (recovering this node's dispatches, claiming what it can), then looks again at each notice,
   * reconnect and heartbeat.
   */
  async start(): Promise<void> {
    const { pipeline, listener, clock, heartbeatMs } = this.#d;
    await pipeline.start();
    const kick = (): void => this.#kick();
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
