// Coding sessions across the nodes of a cluster on PostgreSQL, built once in src/main.ts: the launch queue (placement,
// claims), woken by LISTEN/NOTIFY, by its own sessions' ends and by the heartbeat's period.
import type { Kysely, Transaction } from 'kysely';
import type { QueuedLaunch } from '../coding/launch-queue.ts';
import { LaunchQueue } from '../coding/launch-queue.ts';
import type { LaunchRequest, SessionManager } from '../coding/session-manager.ts';
import { realOrResolved } from '../coding/workspace.ts';
import type { Clock } from '../core/clock.ts';
import type { Config, HarnessName } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';
import { ClusterNodeStore } from '../store/cluster-nodes.ts';
import type { Placement, StoredSession } from '../store/coding-sessions.ts';
import { LAUNCH_CHANNEL, LaunchQueueStore } from '../store/launch-queue.ts';
import { PgListener } from '../store/pg-listener.ts';
import type { Database } from '../store/tables/index.ts';

/** How ClusterSessions is built. */
export interface ClusterSessionsDeps {
  db: Kysely<Database>;
  /** The PostgreSQL URL (`store.url`), for the LISTEN connection. */
  url: string;
  config: Config;
  clock: Clock;
  logger: Logger;
  sessions: SessionManager;
  /** The harnesses this node can run. */
  harnesses: readonly HarnessName[];
  /** How often the queue is looked at unasked (ms): the heartbeat. */
  heartbeatMs: number;
}

/** This node's part in the cluster's sessions: the launch queue (and the commands for sessions on other nodes). */
export class ClusterSessions {
  readonly name: string;
  readonly queue: LaunchQueue;
  readonly #listener: PgListener;

  constructor(deps: ClusterSessionsDeps) {
    const { config, clock } = deps;
    const logger = deps.logger.child({ component: 'cluster-sessions' });
    this.name = config.node.name;
    this.#listener = new PgListener({ url: deps.url, clock, logger });
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
  }

  /** Places a launch in the cluster (see LaunchQueue.launch). */
  launch(
    request: LaunchRequest,
    placement: Placement,
    onStored?: (record: StoredSession, trx: Transaction<Database>) => Promise<void>,
  ): Promise<QueuedLaunch> {
    return this.queue.launch(request, placement, onStored);
  }

  /** Starts listening and claiming. */
  async start(): Promise<void> {
    await this.#listener.start();
    this.queue.start();
  }

  /** Stops claiming and listening. */
  async stop(): Promise<void> {
    await this.queue.stop();
    await this.#listener.stop();
  }
}
