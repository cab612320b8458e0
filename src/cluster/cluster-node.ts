// This daemon as a node of the cluster: it joins (`cluster_nodes`), writes a heartbeat every `heartbeatSec`, declares
// down the nodes whose heartbeat is older than `nodeTimeoutSec` (one compare-and-swap per node, so one node of the
// cluster wins each) and runs the takeover of what they left, and keeps its singletons' leases. On SQLite it is the one
// node of a cluster of one: the same code, with nobody else to watch.
import type { Clock, Timer } from '../core/clock.ts';
import type { HarnessName } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';
import type { LeaseStore } from '../store/cluster-leases.ts';
import type { ClusterNodeStore, NodeRecord } from '../store/cluster-nodes.ts';
import type { ClusterView, NodeListing } from './node-listing.ts';
import { nodeListing } from './node-listing.ts';
import { Singletons } from './singletons.ts';

/** What to do when a node is declared down: idempotent (it may run twice, on two nodes, after a crash). */
export type TakeoverStep = (node: NodeRecord) => Promise<void>;

/** How a ClusterNode is built. */
export interface ClusterNodeOptions {
  store: ClusterNodeStore;
  leases: LeaseStore;
  clock: Clock;
  logger: Logger;
  name: string;
  /** A fresh id for this run of the node (also the owner of its idempotency claims). */
  incarnation: string;
  labels: readonly string[];
  harnesses: readonly HarnessName[];
  workspaces: readonly string[];
  maxSessions: number;
  url: string | null;
  timeoutMs: number;
  heartbeatMs: number;
  /** Sessions running (or starting) per node name, for `nodes`. */
  runningByNode: () => Promise<ReadonlyMap<string, number>>;
}

/** This daemon's membership of the cluster: heartbeat, failure detection with takeover, singleton leases. */
export class ClusterNode implements ClusterView {
  readonly name: string;
  /** A fresh id for this run of the node. */
  readonly incarnation: string;
  readonly singletons: Singletons;
  readonly #o: ClusterNodeOptions;
  readonly #takeover: { name: string; step: TakeoverStep }[] = [];
  #timer: Timer | null = null;
  #tick: Promise<void> = Promise.resolve();
  #fenced = false;

  constructor(options: ClusterNodeOptions) {
    this.#o = options;
    this.name = options.name;
    this.incarnation = options.incarnation;
    this.singletons = new Singletons({
      leases: options.leases,
      holder: { node: options.name, incarnation: this.incarnation },
      now: () => options.clock.now(),
      leaseMs: options.timeoutMs,
      logger: options.logger,
    });
  }

  /** Adds a step of the takeover of a down node (in order of registration); register before `start`. */
  onNodeDown(name: string, step: TakeoverStep): void {
    this.#takeover.push({ name, step });
  }

  /** Joins the cluster (a new incarnation of this node's row), takes the leases it can, and starts the heartbeat. */
  async start(url: string | null = this.#o.url): Promise<void> {
    const now = this.#o.clock.now();
    await this.#o.store.join(
      {
        name: this.name,
        incarnation: this.incarnation,
        labels: [...this.#o.labels],
        harnesses: [...this.#o.harnesses],
        workspaces: [...this.#o.workspaces],
        maxSessions: this.#o.maxSessions,
        url,
        startedAt: now,
      },
      now,
    );
    // A node restarting under its name replaced its dead previous run: that run's leases are free at once (on SQLite
    // this is how the one node takes every lease back after a crash, without waiting for them to expire).
    await this.#o.leases.releaseAllOf(this.name, this.incarnation);
    await this.beat();
    this.#timer = this.#o.clock.every(this.#o.heartbeatMs, () => void this.beat());
  }

  /**
   * One heartbeat: writes ours, declares stale nodes down and takes over what they left, then renews and takes
   * leases. Beats never overlap; resolves when this one is done. Errors are logged (the next beat retries).
   */
  beat(): Promise<void> {
    this.#tick = this.#tick.then(() => this.#beat());
    return this.#tick;
  }

  async #beat(): Promise<void> {
    const { store, clock, logger, timeoutMs } = this.#o;
    try {
      const now = clock.now();
      const ours = await store.beat(this.name, this.incarnation, now);
      if (!ours) {
        if (!this.#fenced) {
          logger.error(
            { node: this.name },
            'this node was declared down by the others (or its name was taken): it stops serving singletons',
          );
        }
        this.#fenced = true;
        await this.singletons.stop();
        return;
      }
      const marked = await store.markStale(now - timeoutMs, now, this.name);
      for (const node of marked)
        logger.warn({ node: node.name }, `node ${node.name} lost: no heartbeat for ${timeoutMs / 1000}s`);
      const orphaned = await store.owedTakeovers(now - timeoutMs);
      const owed = [...marked, ...orphaned.filter((o) => !marked.some((m) => m.name === o.name))];
      for (const node of owed) await this.#takeOver(node);
      await this.singletons.pass();
    } catch (error) {
      logger.warn({ err: error, node: this.name }, 'cluster heartbeat failed; retrying at the next one');
    }
  }

  async #takeOver(node: NodeRecord): Promise<void> {
    await this.#o.leases.releaseAllOf(node.name);
    for (const { name, step } of this.#takeover) {
      try {
        await step(node);
      } catch (error) {
        this.#o.logger.error({ err: error, node: node.name, step: name }, 'a takeover step failed; retried later');
        return;
      }
    }
    await this.#o.store.tookOver(node.name, node.incarnation, this.#o.clock.now());
  }

  /** Every node the cluster has seen, with its running sessions; see ClusterView. */
  async nodes(): Promise<NodeListing[]> {
    const [records, running] = await Promise.all([this.#o.store.list(), this.#o.runningByNode()]);
    const now = this.#o.clock.now();
    return records.map((node) =>
      nodeListing(node, running.get(node.name) ?? 0, { now, timeoutMs: this.#o.timeoutMs, self: this.name }),
    );
  }

  /** True once the others declared this node down while it ran (it then serves no singleton). */
  get fenced(): boolean {
    return this.#fenced;
  }

  /** Stops the heartbeat and the singletons, gives up the leases and marks this node down (a clean leave). */
  async stop(): Promise<void> {
    this.#timer?.cancel();
    this.#timer = null;
    await this.#tick;
    await this.singletons.stop();
    await this.#o.store.leave(this.name, this.incarnation, this.#o.clock.now());
  }
}
