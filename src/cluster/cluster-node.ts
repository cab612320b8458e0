// This daemon as a node of the cluster: it joins (`cluster_nodes`), writes a heartbeat every `heartbeatSec`, declares
// down the nodes whose heartbeat is older than `nodeTimeoutSec` (one compare-and-swap per node, so one node of the
// cluster wins each) and runs the takeover of what they left, and keeps its singletons' leases. On SQLite it is the one
// node of a cluster of one: the same code, with nobody else to watch.
import type { Clock, Timer } from '../core/clock.ts';
import type { HarnessName } from '../core/config.ts';
import { AppError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import type { Logger } from '../core/logger.ts';
import type { LeaseStore } from '../store/cluster-leases.ts';
import type { ClusterNodeStore, NodeRecord } from '../store/cluster-nodes.ts';
import type { ClusterView, NodeListing } from './node-listing.ts';
import { nodeListing } from './node-listing.ts';
import { Singletons } from './singletons.ts';

/** What to do when a node is declared down: idempotent (it may run twice, on two nodes, after a crash). */
export type TakeoverStep = (node: NodeRecord) => Promise<void>;

/**
 * What a part of the node does when the others declared it down while it ran (see `ClusterNode.onRejoin`): `leave`
 * ends its local work and refuses new work (idempotent: retried at the next beat when it throws); `resume` takes new
 * work again once the node joined under a fresh incarnation.
 */
export interface RejoinStep {
  leave(): Promise<void>;
  resume(): Promise<void>;
}

/** Where this node stands: serving, or declared down while alive and on its way back (`rejoining`). */
export type NodeState = 'up' | 'rejoining' | 'replaced';

/** How a ClusterNode is built. */
export interface ClusterNodeOptions {
  store: ClusterNodeStore;
  leases: LeaseStore;
  clock: Clock;
  logger: Logger;
  name: string;
  /** A fresh id for this run of the node (also the owner of its idempotency claims). */
  incarnation: string;
  /** Makes the fresh incarnation a node declared down while alive rejoins under (default `newId(16)`). */
  newIncarnation?: () => string;
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
  readonly singletons: Singletons;
  readonly #o: ClusterNodeOptions;
  readonly #takeover: { name: string; step: TakeoverStep }[] = [];
  readonly #rejoin: { name: string; step: RejoinStep }[] = [];
  #incarnation: string;
  #state: NodeState = 'up';
  #url: string | null;
  #timer: Timer | null = null;
  #tick: Promise<void> = Promise.resolve();

  constructor(options: ClusterNodeOptions) {
    this.#o = options;
    this.name = options.name;
    this.#incarnation = options.incarnation;
    this.#url = options.url;
    this.singletons = new Singletons({
      leases: options.leases,
      holder: { node: options.name, incarnation: options.incarnation },
      now: () => options.clock.now(),
      leaseMs: options.timeoutMs,
      logger: options.logger,
    });
  }

  /** Adds a step of the takeover of a down node (in order of registration); register before `start`. */
  onNodeDown(name: string, step: TakeoverStep): void {
    this.#takeover.push({ name, step });
  }

  /**
   * Adds what a part of the node does when it was declared down while alive (in order of registration; resumed in
   * reverse), e.g. ending its local agents and pausing its launch claims. Register before `start`.
   */
  onRejoin(name: string, step: RejoinStep): void {
    this.#rejoin.push({ name, step });
  }

  /** This run's id in the cluster: a fresh one after each rejoin. */
  get incarnation(): string {
    return this.#incarnation;
  }

  /** Where this node stands (see NodeState). */
  get state(): NodeState {
    return this.#state;
  }

  /**
   * Throws `unavailable` unless this node serves: while it rejoins (or another process took its name) new work must go
   * to another node. For the entry points of new work (launches, claims, forwarded requests).
   */
  assertServing(): void {
    if (this.#state === 'up') return;
    const why = this.#state === 'rejoining' ? 'is rejoining the cluster' : 'was replaced by another process';
    throw new AppError('unavailable', `unavailable: node ${this.name} ${why}`);
  }

  /** Joins the cluster (a new incarnation of this node's row), takes the leases it can, and starts the heartbeat. */
  async start(url: string | null = this.#o.url): Promise<void> {
    this.#url = url;
    const now = this.#o.clock.now();
    await this.#join(now);
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

  async #join(now: number): Promise<void> {
    await this.#o.store.join(
      {
        name: this.name,
        incarnation: this.#incarnation,
        labels: [...this.#o.labels],
        harnesses: [...this.#o.harnesses],
        workspaces: [...this.#o.workspaces],
        maxSessions: this.#o.maxSessions,
        url: this.#url,
        startedAt: now,
      },
      now,
    );
  }

  async #beat(): Promise<void> {
    const { store, clock, logger, timeoutMs } = this.#o;
    try {
      if (this.#state === 'replaced') return;
      const now = clock.now();
      const ours = this.#state === 'up' && (await store.beat(this.name, this.#incarnation, now));
      if (!ours) {
        await this.#rejoinCluster(now);
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

  /** True while this node is not serving: declared down while it ran (until it rejoined), or its name taken. */
  get fenced(): boolean {
    return this.#state !== 'up';
  }

  /**
   * The beat found this run's row no longer up. Declared down while alive (our incarnation, `down`): stop the
   * singletons, run the `leave` steps, wait for the takeover of what this run left (taking it over itself once it is
   * owed, as any node would), then join again under a fresh incarnation and run the `resume` steps. A row another
   * process took (another incarnation, up) is left alone: this run stays fenced. Throws to be retried at the next beat.
   */
  async #rejoinCluster(now: number): Promise<void> {
    const { store, logger, timeoutMs } = this.#o;
    const row = await store.get(this.name);
    const downWhileAlive = row !== null && row.incarnation === this.#incarnation && row.status === 'down';
    if (this.#state === 'up') {
      this.#state = downWhileAlive ? 'rejoining' : 'replaced';
      logger.error(
        { node: this.name },
        downWhileAlive
          ? 'this node was declared down by the others while it ran: it ends its work here and rejoins the cluster'
          : "another process took this node's name: this one stops serving",
      );
    }
    await this.singletons.fence();
    for (const { step } of this.#rejoin) await step.leave();
    if (this.#state === 'replaced' || !row) return;
    if (row.takenOverAt === null) {
      // The taker died before it finished: the takeover is owed once one timeout passed, and this node can do it.
      if (row.downAt === null || row.downAt >= now - timeoutMs) return;
      await this.#takeOver(row);
      const after = await store.get(this.name);
      if (after?.takenOverAt === null) return;
    }
    this.#incarnation = this.#o.newIncarnation?.() ?? newId(16);
    await this.#join(now);
    this.singletons.rejoin({ node: this.name, incarnation: this.#incarnation });
    this.#state = 'up';
    logger.warn({ node: this.name, incarnation: this.#incarnation }, 'this node rejoined the cluster');
    for (const { step } of [...this.#rejoin].reverse()) await step.resume();
    await this.singletons.pass();
  }

  /** Stops the heartbeat and the singletons, gives up the leases and marks this node down (a clean leave). */
  async stop(): Promise<void> {
    this.#timer?.cancel();
    this.#timer = null;
    await this.#tick;
    await this.singletons.stop();
    await this.#o.store.leave(this.name, this.#incarnation, this.#o.clock.now());
  }
}
