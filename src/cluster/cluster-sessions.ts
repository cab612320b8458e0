// Coding sessions across the nodes of a cluster on PostgreSQL, built once in src/main.ts: the launch queue (placement,
// claims), woken by LISTEN/NOTIFY, by its own sessions' ends and by the heartbeat's period; and the command queue that
// steers a session on another node (send, kill, resume, an approval's decision).
import type { Kysely } from 'kysely';
import type { LaunchOptions, QueuedLaunch } from '../coding/launch-queue.ts';
import { LaunchQueue } from '../coding/launch-queue.ts';
import type { LaunchRequest, SessionManager } from '../coding/session-manager.ts';
import { realOrResolved } from '../coding/workspace.ts';
import type { Clock } from '../core/clock.ts';
import type { Config, HarnessName } from '../core/config.ts';
import { AppError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { ClusterCommandStore } from '../store/cluster-commands.ts';
import { ClusterNodeStore } from '../store/cluster-nodes.ts';
import type { Placement } from '../store/coding-session-types.ts';
import { LAUNCH_CHANNEL, LaunchQueueStore } from '../store/launch-queue.ts';
import type { Database } from '../store/tables/index.ts';
import { ClusterCommands } from './cluster-commands.ts';
import type { PgListener } from './pg-listener.ts';

/** A request forwarded to the node that runs its session: an operation by name, its arguments and who asked. */
export interface ForwardedRequest {
  operation: string;
  args: Record<string, unknown>;
  /** The caller as the asking node saw it (`Caller` of operations/operation.ts). */
  caller: unknown;
  /** The node that forwarded it. */
  from: string;
}

/** How ClusterSessions is built. */
export interface ClusterSessionsDeps {
  db: Kysely<Database>;
  /** The node's LISTEN connection (started and stopped by its owner, cluster-records.ts). */
  listener: PgListener;
  config: Config;
  clock: Clock;
  logger: Logger;
  sessions: SessionManager;
  /** The harnesses this node can run. */
  harnesses: readonly HarnessName[];
  /** How often the queue is looked at unasked (ms): the heartbeat. */
  heartbeatMs: number;
  /** How long a request for another node waits for its answer (ms; default 30 s). */
  commandWaitMs?: number;
}

/** This node's part in the cluster's sessions: the launch queue (and the commands for sessions on other nodes). */
export class ClusterSessions {
  readonly name: string;
  readonly queue: LaunchQueue;
  readonly commands: ClusterCommands;
  readonly #listener: PgListener;
  readonly #nodes: ClusterNodeStore;
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  /** Why this node takes no new work now (it is rejoining the cluster), or null. */
  #paused: string | null = null;
  #started = false;

  constructor(deps: ClusterSessionsDeps) {
    const { config, clock } = deps;
    const logger = deps.logger.child({ component: 'cluster-sessions' });
    this.name = config.node.name;
    this.#nodes = new ClusterNodeStore(deps.db);
    this.#clock = clock;
    this.#timeoutMs = config.cluster.nodeTimeoutSec * 1000;
    this.#listener = deps.listener;
    this.queue = new LaunchQueue({
      config,
      clock,
      logger,
      sessions: deps.sessions,
      store: new LaunchQueueStore(deps.db),
      nodes: new ClusterNodeStore(deps.db),
      ability: {
        name: config.node.name,
        labels: config.node.labels,
        harnesses: deps.harnesses,
        workspaces: config.workspaces.map(realOrResolved),
      },
      passMs: deps.heartbeatMs,
    });
    this.#listener.on(LAUNCH_CHANNEL, () => this.queue.kick());
    // Launches queued while the LISTEN connection was away went unnoticed: look again once it is back.
    this.#listener.onConnect(() => this.queue.kick());
    this.commands = new ClusterCommands({
      store: new ClusterCommandStore(deps.db),
      nodes: new ClusterNodeStore(deps.db),
      listener: this.#listener,
      clock,
      logger,
      name: config.node.name,
      nodeTimeoutMs: config.cluster.nodeTimeoutSec * 1000,
      waitMs: deps.commandWaitMs ?? 30_000,
      pollMs: 250,
      drainMs: deps.heartbeatMs,
    });
  }

  /**
   * Runs `operation` with `args` on node `target` for `caller` (a session there is steered by that node) and resolves
   * with its answer; see ClusterCommands.call.
   */
  forward(target: string, request: ForwardedRequest): Promise<unknown> {
    return this.commands.call(target, request.operation, request);
  }

  /** The takeover of a lost node: its unfinished commands fail (its sessions are interrupted by the SessionManager). */
  takeOver(node: string): Promise<void> {
    return this.commands.takeOver(node);
  }

  /** Places a launch in the cluster (see LaunchQueue.launch). */
  launch(request: LaunchRequest, placement: Placement, options: LaunchOptions = {}): Promise<QueuedLaunch> {
    if (this.#paused) return Promise.reject(new AppError('unavailable', this.#paused));
    return this.queue.launch(request, placement, options);
  }

  /**
   * Takes no new work until `resume` (this node was declared down while alive and is rejoining): launches placed here
   * and requests forwarded to it fail with `unavailable: <why>`, and it claims no queued launch. Idempotent.
   */
  async pause(why: string): Promise<void> {
    if (this.#paused) return;
    this.#paused = why;
    if (this.#started) await this.queue.stop();
  }

  /** Takes work again after `pause` (the node rejoined). */
  resume(): void {
    if (!this.#paused) return;
    this.#paused = null;
    if (this.#started) this.queue.start();
  }

  /** True when node `name` is up: not declared down, heard from within the node timeout. */
  async nodeUp(name: string): Promise<boolean> {
    const node = await this.#nodes.get(name);
    return node !== null && node.status === 'up' && this.#clock.now() - node.heartbeatAt <= this.#timeoutMs;
  }

  /** Starts listening, claiming launches and running the commands for this node with `execute`. */
  async start(execute: (request: ForwardedRequest) => Promise<unknown>): Promise<void> {
    this.#started = true;
    if (!this.#paused) this.queue.start();
    await this.commands.start((_kind, payload) => {
      if (this.#paused) throw new AppError('unavailable', this.#paused);
      return execute(payload as ForwardedRequest);
    });
  }

  /** Stops claiming, running commands and listening. */
  async stop(): Promise<void> {
    this.#started = false;
    await this.queue.stop();
    await this.commands.stop();
  }
}
