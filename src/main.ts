import type { CodeRunCluster } from './coding/code-runner.ts';
import type { Harness } from './coding/harness.ts';
import type { Clock } from './core/clock.ts';
import type { Config, HarnessName } from './core/config.ts';
import type { LoadOptions } from './core/config-load.ts';
import { newId } from './core/ids.ts';
import type { Logger } from './core/logger.ts';
import { buildChatNotices, openChat, startChatConnectors } from './daemon/chat.ts';
import { buildClusterNode, heartbeatMs, joinCluster, linearOnNodes, startNodeWork } from './daemon/cluster-node.ts';
import { openNodeRecords, primaryFence } from './daemon/cluster-postgres.ts';
import { buildCodingSessions } from './daemon/coding-sessions.ts';
import { serveGateway } from './daemon/gateway.ts';
import { claimHome } from './daemon/home.ts';
import { buildIntegrations } from './daemon/integrations.ts';
import { buildOrchestrator } from './daemon/orchestrator.ts';
import { restoreLastRun } from './daemon/restore.ts';
import { Shutdown } from './daemon/shutdown.ts';
import { primaryGroup, registerSingletons } from './daemon/singletons.ts';
import type { Inference } from './inference/types.ts';
import { codeRunCluster } from './operations/code-run.ts';
import { Idempotency } from './operations/idempotency.ts';
import { createInboundHandler } from './operations/inbound.ts';
import type { OperationServices } from './operations/operation.ts';
import { runForwarded } from './operations/remote.ts';
import { OPERATIONS } from './operations/table.ts';
import { createOperationsToolbox } from './operations/toolbox.ts';
import { ClusterNodeStore } from './store/cluster-nodes.ts';
import { releaseDaemonLock, updateDaemonInfo } from './store/daemon-lock.ts';
import { IdempotencyKeyStore } from './store/idempotency-keys.ts';
import { InboundCommandStore } from './store/inbound-commands.ts';
import { openStore } from './store/open-store.ts';
import { VERSION } from './version.ts';

/** How a daemon is started: where its config comes from (LoadOptions), and what tests replace. */
export interface DaemonOptions extends LoadOptions {
  /** Where log lines go (default stdout). */
  logDestination?: NodeJS.WritableStream;
  /** Replaces the real harnesses (tests). */
  harnesses?: Record<HarnessName, Harness>;
  /** Replaces the inference built from `config.inference` (tests). */
  inference?: Inference;
  clock?: Clock;
}

/** A running daemon. */
export interface Daemon {
  url: string;
  port: number;
  home: string;
  token: string;
  config: Config;
  logger: Logger;
  services: OperationServices;
  /** Stops everything in reverse order of start; running sessions are marked interrupted. */
  stop(): Promise<void>;
}

/**
 * The composition root: reads the config, claims the state directory, opens the store, builds every service (coding
 * sessions, outbox and chat connectors, notifications, inference, the engine with its scheduler and wake router),
 * restores what the last run left, and starts the gateway. Returns a handle that stops it all in reverse order.
 * The parts are in `src/daemon/`; the stop order is written once in `daemon/shutdown.ts`.
 */
export async function startDaemon(options: DaemonOptions = {}): Promise<Daemon> {
  const { config, home, env, clock, startedAt, logger } = claimHome(options);
  const shutdown = new Shutdown(logger);
  shutdown.add('daemon-lock', () => releaseDaemonLock(home));
  const stop = (): Promise<void> => shutdown.run();
  try {
    const store = await openStore(config.store, home, clock, logger.child({ component: 'store' }));
    shutdown.add('store', () => store.close());
    const { db, dialect } = store;
    // This run of the node: its cluster incarnation, also the owner of its idempotency claims (a live node's claim is in
    // progress; a dead one's is taken over).
    const incarnation = newId(16);
    // The node is built once the services it reports on are; these read it (its incarnation is fresh after a rejoin).
    const fence = primaryFence(config, () => node.cluster.incarnation);
    const chat = await openChat({ config, env, home, store, clock, logger, fence });
    const { outbox, connectors } = chat;
    // Cluster (PostgreSQL): the log records written through to the database, and the node's LISTEN connection.
    const records = await openNodeRecords({ store, config, clock, logger, fence, shutdown });
    // Cluster (PostgreSQL): every node's open web pages get the chat changes other nodes write (the holder's replies).
    if (connectors.web && records) connectors.web.share(records.listener);
    const coding = buildCodingSessions({
      config,
      home,
      db,
      clock,
      logger,
      records,
      harnesses: options.harnesses,
      shutdown,
      // While the cluster has this node down (a stall, until it rejoined), a launch reaching it is refused.
      serving: () => !node.cluster.fenced,
    });
    const { sessions, approvals } = coding;
    const idempotency = new Idempotency(new IdempotencyKeyStore(db, incarnation), clock);
    // The `primary` singleton: outbox deliveries, engine, scheduler, wake router, Linear, chat connectors (not the web).
    const primary = primaryGroup(logger);
    // Set once the operations' services are whole (in a cluster): where a code_run naming no placement runs.
    let codeRunPlacement: CodeRunCluster | undefined;
    const orchestrator = buildOrchestrator({
      config,
      env,
      home,
      db,
      clock,
      logger,
      records,
      inference: options.inference,
      outbox,
      coding,
      shutdown,
      servesEngine: () => primary.running().includes('engine'),
      codeRunPlacement: () => codeRunPlacement,
    });
    const notices = buildChatNotices({ chat, coding, config, clock, logger, shutdown });
    // Stopped before the wake router and the notifications, so the sessions it interrupts are still announced.
    shutdown.add('sessions', () => sessions.stop());
    const nodeStore = new ClusterNodeStore(db);
    const integrations = await buildIntegrations({
      config,
      env,
      db,
      clock,
      logger,
      coding,
      orchestrator,
      outbox,
      linearOnNodes: records
        ? linearOnNodes({ config, coding, nodeStore, clusterSessions: () => node.clusterSessions })
        : null,
    });
    const { github, linear } = integrations;
    const node = buildClusterNode({
      config,
      db,
      clock,
      logger,
      incarnation,
      records,
      nodeStore,
      coding,
      notices,
      orchestrator,
      linearPipeline: linear?.pipeline ?? null,
    });
    const { cluster, clusterSessions } = node;

    // Every service the operations act on, built whole; only Linear and GitHub are absent by configuration.
    const services: OperationServices = {
      config,
      sessions,
      clock,
      engine: orchestrator.routedEngine,
      scheduler: orchestrator.scheduler,
      wake: orchestrator.wake,
      codeRunner: orchestrator.codeRunner,
      idempotency,
      approvals,
      cluster,
      ...(clusterSessions ? { clusterSessions } : {}),
      ...(linear ? { linear: linear.services } : {}),
      ...(github ? { github } : {}),
    };
    orchestrator.tools.bind(createOperationsToolbox({ ops: OPERATIONS, services }));
    if (clusterSessions) codeRunPlacement = codeRunCluster({ caller: { kind: 'rpc' }, services });

    await restoreLastRun({ dialect, coding, notices, orchestrator });
    // Requests other nodes forward for this node's sessions run as the operations they name.
    await startNodeWork({ node, execute: (request) => runForwarded(OPERATIONS, services, request), shutdown });

    const inbound = createInboundHandler({
      ops: OPERATIONS,
      services,
      engine: orchestrator.routedEngine,
      outbox,
      logger: logger.child({ component: 'inbound' }),
      commands: new InboundCommandStore(db),
    });
    // The singletons start when the node joins (on SQLite this node takes them all there, before joinCluster resolves).
    // Every node stores its own sessions' wake events; the primary's holder delivers them.
    orchestrator.wake.startIntake();
    const members = await startChatConnectors({ connectors, inbound, primary, shutdown });
    const heartbeat = heartbeatMs(config);
    registerSingletons({
      primary,
      singletons: cluster.singletons,
      holder: () => cluster.incarnation,
      home,
      db,
      config,
      clock,
      logger,
      heartbeatMs: heartbeat,
      records,
      outbox,
      connectors: members,
      orchestrator,
      integrations,
      shutdown,
    });

    const { url, port, token } = await serveGateway({
      config,
      home,
      db,
      dialect,
      clock,
      logger,
      startedAt,
      services,
      coding,
      chat,
      orchestrator,
      idempotency,
      integrations,
      records,
      heartbeatMs: heartbeat,
      shutdown,
    });
    await joinCluster({ cluster, config, url, dialect, primary, shutdown });
    updateDaemonInfo(home, { pid: process.pid, startedAt, version: VERSION, url, port });
    logger.info(
      {
        url,
        home,
        version: VERSION,
        node: cluster.name,
        store: store.where,
        channels: connectors.all.map((c) => c.channel),
        inference: orchestrator.inference.available,
      },
      `switchboard daemon started — ${connectors.web ? `web page at ${url}/` : 'web page disabled'}`,
    );
    return { url, port, home, token, config, logger, services, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
