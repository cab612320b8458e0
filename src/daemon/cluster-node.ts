// This daemon as a node of the cluster (a cluster of one on SQLite): the ClusterNode (heartbeat, failure detection,
// leases) with what the sessions do when a node is lost or this one rejoins, and on PostgreSQL the launch queue and
// commands across the nodes (ClusterSessions) and the Linear pipeline run on every node. Joining comes last in a start.
import { homedir } from 'node:os';
import type { Kysely } from 'kysely';
import { ClusterNode } from '../cluster/cluster-node.ts';
import type { ClusterRecords } from '../cluster/cluster-records.ts';
import type { ForwardedRequest } from '../cluster/cluster-sessions.ts';
import { ClusterSessions } from '../cluster/cluster-sessions.ts';
import type { NodePipeline } from '../cluster/linear-dispatch-node.ts';
import { LinearDispatchNode, nodePlacement } from '../cluster/linear-dispatch-node.ts';
import type { ServiceGroup } from '../cluster/service-group.ts';
import type { Clock } from '../core/clock.ts';
import type { Config, HarnessName } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';
import type { WakeRouter } from '../engine/wake/wake-router.ts';
import type { NotificationRouter } from '../notify/notification-router.ts';
import { LeaseStore } from '../store/cluster-leases.ts';
import type { ClusterNodeStore } from '../store/cluster-nodes.ts';
import type { Database } from '../store/tables/index.ts';
import type { CodingSessions } from './coding-sessions.ts';
import type { LinearOnNodes } from './integrations.ts';
import type { Shutdown } from './shutdown.ts';

/** How often this node beats, and looks unasked for work (ms). */
export function heartbeatMs(config: Config): number {
  return (config.cluster.heartbeatSec ?? config.cluster.nodeTimeoutSec / 5) * 1000;
}

/**
 * In a cluster (PostgreSQL): this node's placement of Linear dispatches, and the forwarder of prompts and approval
 * replies to workers on other nodes through `clusterSessions` (read when a request is forwarded, once it is built).
 */
export function linearOnNodes(deps: {
  config: Config;
  coding: { harnessNames: readonly HarnessName[] };
  nodeStore: ClusterNodeStore;
  clusterSessions: () => ClusterSessions | null;
}): LinearOnNodes {
  const { config } = deps;
  return {
    placement: nodePlacement(config, deps.coding.harnessNames, deps.nodeStore),
    forwarder: {
      node: config.node.name,
      forward: (node: string, operation: string, args: Record<string, unknown>, caller: unknown) => {
        const clusterSessions = deps.clusterSessions();
        if (!clusterSessions) throw new Error('the cluster sessions are not built');
        return clusterSessions.forward(node, { operation, args, caller, from: config.node.name });
      },
    },
  };
}

/** The node's parts: its membership, and on PostgreSQL its cluster sessions and Linear dispatch node (else null). */
export interface NodeParts {
  cluster: ClusterNode;
  clusterSessions: ClusterSessions | null;
  linearNode: LinearDispatchNode | null;
}

/**
 * Builds the node and registers what its sessions do when another node is lost (marked interrupted and announced once,
 * the lost node's commands failed) and when this node is declared down while alive (see the rejoin step below). With
 * `records` (PostgreSQL) also the launch queue and commands across nodes, and the Linear pipeline's node when
 * `linearPipeline` is given. Nothing is started.
 */
export function buildClusterNode(deps: {
  config: Config;
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  incarnation: string;
  records: ClusterRecords | null;
  nodeStore: ClusterNodeStore;
  coding: Pick<CodingSessions, 'sessions' | 'harnessNames'>;
  notices: { notifications: Pick<NotificationRouter, 'announceInterrupted'> };
  orchestrator: { wake: Pick<WakeRouter, 'announceInterrupted'> };
  linearPipeline: NodePipeline | null;
}): NodeParts {
  const { config, clock, logger, records } = deps;
  const { sessions, harnessNames } = deps.coding;
  const { notifications } = deps.notices;
  const { wake } = deps.orchestrator;
  const heartbeat = heartbeatMs(config);
  // On PostgreSQL: the launch queue across the nodes and the commands for sessions on other nodes.
  const clusterSessions = records
    ? new ClusterSessions({
        db: deps.db,
        listener: records.listener,
        config,
        clock,
        logger,
        sessions,
        harnesses: harnessNames,
        heartbeatMs: heartbeat,
      })
    : null;
  // This daemon as a node of the cluster (a cluster of one on SQLite): heartbeat, failure detection, leases.
  const cluster = new ClusterNode({
    store: deps.nodeStore,
    leases: new LeaseStore(deps.db),
    clock,
    logger: logger.child({ component: 'cluster' }),
    name: config.node.name,
    incarnation: deps.incarnation,
    labels: config.node.labels,
    harnesses: harnessNames,
    workspaces: config.workspaces.length > 0 ? config.workspaces : [homedir()],
    maxSessions: config.maxSessions,
    url: config.node.url ?? null,
    timeoutMs: config.cluster.nodeTimeoutSec * 1000,
    heartbeatMs: heartbeat,
    runningByNode: () => sessions.activeByNode(),
  });
  // Sessions a lost node left, marked interrupted ("node <name> lost"): announced once, like a restart's (each
  // announcement keyed per interruption; the notices cleared last).
  const announceLost = async (owed: Awaited<ReturnType<typeof sessions.interruptNode>>): Promise<void> => {
    await notifications.announceInterrupted(owed);
    await wake.announceInterrupted(owed);
    await sessions.restartNoticesStored(owed);
  };
  cluster.onNodeDown('sessions', async (node) => {
    await announceLost(await sessions.interruptNode(node.name));
    await clusterSessions?.takeOver(node.name);
  });
  // Declared down while alive (a stall): no new launches, claims or forwarded requests until the node rejoined, and
  // its agents stopped without a word more about their sessions (the node taking it over marks and announces them).
  // A session launched here after that takeover (before this node saw it was down) is marked and announced by this
  // node itself: the same compare-and-swap as the taker's, so each is announced once.
  cluster.onRejoin('sessions', {
    leave: async () => {
      await clusterSessions?.pause(`unavailable: node ${config.node.name} is rejoining the cluster`);
      const stopped = sessions.abandonAll(`node ${config.node.name} lost`);
      if (stopped > 0) logger.warn({ stopped }, 'declared down by the cluster: stopped the agents of this node');
      await announceLost(await sessions.interruptNode(config.node.name, { spareLive: true }));
    },
    resume: async () => clusterSessions?.resume(),
  });
  // Cluster (PostgreSQL): the Linear pipeline on every node; a lost node's dispatches released after its sessions.
  const linearNode =
    deps.linearPipeline && records
      ? new LinearDispatchNode({
          pipeline: deps.linearPipeline,
          listener: records.listener,
          cluster,
          clock,
          heartbeatMs: heartbeat,
        })
      : null;
  return { cluster, clusterSessions, linearNode };
}

/**
 * Starts the node's work once its sessions are restored (PostgreSQL): the cluster sessions, running the requests other
 * nodes forward for this node's sessions with `execute`, then the Linear pipeline's node. Both stop before the sessions.
 */
export async function startNodeWork(deps: {
  node: Pick<NodeParts, 'clusterSessions' | 'linearNode'>;
  execute: (request: ForwardedRequest) => Promise<unknown>;
  shutdown: Shutdown;
}): Promise<void> {
  const { clusterSessions, linearNode } = deps.node;
  if (clusterSessions) {
    await clusterSessions.start(deps.execute);
    deps.shutdown.add('cluster-sessions', () => clusterSessions.stop());
  }
  if (linearNode) {
    await linearNode.start();
    // Stopped before the sessions, like the primary's `linear`: running sessions are left to the SessionManager.
    deps.shutdown.add('linear-dispatch-node', () => linearNode.stop());
  }
}

/**
 * Joins the cluster as `url` (`node.url` when set): its first pass starts the singletons this node takes (on SQLite all
 * of them, before this resolves). The node leaves at the daemon's stop, once the services stopped. A cluster of one
 * serves every singleton: one that failed to start fails the start (throws the failure of `primary`).
 */
export async function joinCluster(deps: {
  cluster: ClusterNode;
  config: Config;
  url: string;
  dialect: 'sqlite' | 'postgres';
  primary: Pick<ServiceGroup, 'failure'>;
  shutdown: Shutdown;
}): Promise<void> {
  const { cluster, primary } = deps;
  await cluster.start(deps.config.node.url ?? deps.url);
  // Stopped last (just before the store): the services are stopped first in the daemon's order, then the leases are
  // given up and the node leaves (a clean leave is not taken for a lost node).
  deps.shutdown.add('cluster-node', () => cluster.stop());
  if (deps.dialect !== 'postgres' && !cluster.singletons.served().includes('primary'))
    throw primary.failure instanceof Error ? primary.failure : new Error('could not start the primary services');
}
