import { homedir } from 'node:os';
import { join } from 'node:path';
import { ApprovalDesk } from './approvals/desk.ts';
import { createChatConnectors } from './channels/chat-connectors.ts';
import { createOutbox } from './channels/outbox.ts';
import { slackHttpEndpoints } from './channels/slack/slack-connectors.ts';
import { ClusterNode } from './cluster/cluster-node.ts';
import { openClusterRecords } from './cluster/cluster-records.ts';
import { ClusterSessions } from './cluster/cluster-sessions.ts';
import { rebuildEngineLogs } from './cluster/engine-rebuild.ts';
import { LinearDispatchNode, nodePlacement } from './cluster/linear-dispatch-node.ts';
import { addPrimaryMembers, connectorSingletonName } from './cluster/primary.ts';
import { ClusterRecordReader } from './cluster/record-reader.ts';
import { RecordRetention } from './cluster/record-retention.ts';
import { ServiceGroup } from './cluster/service-group.ts';
import { WebhookWakeups } from './cluster/webhook-wakeups.ts';
import type { CodeRunCluster } from './coding/code-runner.ts';
import { CodeRunner } from './coding/code-runner.ts';
import type { Harness } from './coding/harness.ts';
import { createHarnesses } from './coding/harnesses.ts';
import { SessionManager } from './coding/session-manager.ts';
import { workspaceRoot } from './coding/workspace.ts';
import type { Clock } from './core/clock.ts';
import { systemClock } from './core/clock.ts';
import type { Config, HarnessName } from './core/config.ts';
import { HARNESS_NAMES } from './core/config.ts';
import type { LoadOptions } from './core/config-load.ts';
import { loadConfig } from './core/config-load.ts';
import { faultPoint } from './core/fault.ts';
import { newId } from './core/ids.ts';
import type { Logger } from './core/logger.ts';
import { createLogger } from './core/logger.ts';
import { createEngine } from './engine/create.ts';
import { lateToolbox } from './engine/late-toolbox.ts';
import { EngineCallWorker, RoutedEngine } from './engine/routed-engine.ts';
import { createScheduler } from './engine/scheduler/scheduler.ts';
import { createWakeRouter } from './engine/wake/wake-router.ts';
import { registerGithubRoutes } from './gateway/github-routes.ts';
import { registerLinearRoutes } from './gateway/linear-routes.ts';
import { buildGateway } from './gateway/server.ts';
import { announceWebhooks } from './gateway/webhook-announce.ts';
import { createGithubIntegration } from './github/integration.ts';
import { createInference } from './inference/inference.ts';
import type { Inference } from './inference/types.ts';
import { createLinearIntegration } from './linear/integration.ts';
import { ApprovalNotices } from './notify/approval-notices.ts';
import { createNotificationRouter } from './notify/notification-router.ts';
import { codeRunCluster } from './operations/code-run.ts';
import { commandList } from './operations/commands.ts';
import { Idempotency } from './operations/idempotency.ts';
import { createInboundHandler } from './operations/inbound.ts';
import type { OperationServices } from './operations/operation.ts';
import { runForwarded } from './operations/remote.ts';
import { OPERATIONS } from './operations/table.ts';
import { createOperationsToolbox } from './operations/toolbox.ts';
import { fenceIdleMs, leaseFence } from './store/cluster-fence.ts';
import { LeaseStore } from './store/cluster-leases.ts';
import { ClusterNodeStore } from './store/cluster-nodes.ts';
import { ClusterSecretStore } from './store/cluster-secrets.ts';
import { CodingSessionStore } from './store/coding-sessions.ts';
import { acquireDaemonLock, releaseDaemonLock, updateDaemonInfo } from './store/daemon-lock.ts';
import { EngineCallStore } from './store/engine-calls.ts';
import { secureHome } from './store/home-permissions.ts';
import { IdempotencyKeyStore } from './store/idempotency-keys.ts';
import { InboundCommandStore } from './store/inbound-commands.ts';
import { openStore } from './store/open-store.ts';
import { RestartNoticeStore } from './store/restart-notices.ts';
import { SessionLogs } from './store/session-logs.ts';
import type { TokenName } from './store/tokens.ts';
import { ensureToken, sharedToken } from './store/tokens.ts';
import { VERSION } from './version.ts';

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
 */
export async function startDaemon(options: DaemonOptions = {}): Promise<Daemon> {
  const { config, home } = loadConfig(options);
  const env = options.env ?? process.env;
  // Session prompts and output, tokens and the database live here: owner-only, even in a home the user made first.
  const tightened = secureHome(home);
  const clock = options.clock ?? systemClock();
  const startedAt = clock.now();
  acquireDaemonLock(home, { pid: process.pid, startedAt, version: VERSION });
  const logger = createLogger({
    level: config.log.level,
    ...(options.logDestination ? { destination: options.logDestination } : {}),
  });
  if (tightened.length > 0) {
    logger.info(
      { home, count: tightened.length, paths: tightened.slice(0, 20) },
      `made the state directory owner-only: ${tightened.length} path(s) set to 0700 (folders) / 0600 (files)`,
    );
  }
  const stops: (() => Promise<void> | void)[] = [() => releaseDaemonLock(home)];
  const stop = async (): Promise<void> => {
    for (const fn of stops.reverse()) {
      try {
        await fn();
      } catch (error) {
        logger.error({ err: error }, 'error while stopping');
      }
    }
  };
  try {
    const store = await openStore(config.store, home, clock, logger.child({ component: 'store' }));
    const closeStore = (): Promise<void> => store.close();
    stops.push(closeStore);
    const kysely = store.db;
    // Tokens: on PostgreSQL every node of the cluster shares them (made by the first node); on SQLite they are files.
    const secrets = new ClusterSecretStore(kysely);
    const tokenOf = (name: TokenName): Promise<string> =>
      store.dialect === 'postgres'
        ? sharedToken(home, name, secrets, clock.now())
        : Promise.resolve(ensureToken(home, name));
    // This run of the node: its cluster incarnation, also the owner of its idempotency claims (a live node's claim is in
    // progress; a dead one's is taken over).
    const incarnation = newId(16);
    // Cluster (PostgreSQL): the primary holder's engine records and outbox claims commit only while this run holds the
    // `primary` lease (store/cluster-fence.ts); not used on SQLite. The incarnation is the node's current one (fresh
    // after a rejoin), read at each check; the server ends a fenced transaction left idle past half the node timeout.
    const primaryFence = leaseFence({
      name: 'primary',
      node: config.node.name,
      incarnation: () => cluster.incarnation,
      lock: true,
      idleTimeoutMs: fenceIdleMs(config.cluster.nodeTimeoutSec),
    });
    const outbox = createOutbox({
      db: kysely,
      config: config.channels.outbox,
      clock,
      logger: logger.child({ component: 'outbox' }),
      ...(store.dialect === 'postgres' ? { fence: primaryFence } : {}),
    });
    // Cluster: what runs on one node at a time. `primary` (outbox deliveries, engine, scheduler, wake router, Linear, the
    // chat connectors but the web page) is served by the holder of its lease; `github` by the holder of its own. The
    // daemon's stop stops their members in the order below; cluster.stop() then gives the leases up.
    const primary = new ServiceGroup({ logger: logger.child({ component: 'cluster' }), restartable: true });
    const githubWorkers = new ServiceGroup({ logger: logger.child({ component: 'cluster' }), restartable: true });
    stops.push(() => primary.stopMember('outbox'));
    const {
      all: connectors,
      web,
      slack,
    } = createChatConnectors({
      config,
      env,
      home,
      db: kysely,
      clock,
      logger,
      commands: commandList(OPERATIONS),
    });
    for (const connector of connectors) outbox.register(connector);

    // Cluster (PostgreSQL): every log record written through to the database (read from any node; the engine's logs
    // rebuilt from it on takeover), and the node's LISTEN connection. Closed after the logs' writers stopped.
    const records =
      store.dialect === 'postgres' && config.store.url
        ? await openClusterRecords({
            url: config.store.url,
            db: kysely,
            clock,
            logger: logger.child({ component: 'cluster' }),
            retryMs: 1000,
            engineFence: primaryFence,
          })
        : null;
    if (records) stops.push(() => records.close());
    // Cluster (PostgreSQL): every node's open web pages get the chat changes other nodes write (the holder's replies).
    if (web && records) web.share(records.listener);
    const logs = new SessionLogs(join(home, 'logs'), {
      ...(records ? { mirror: records.mirror, database: records.store } : {}),
      fsyncBatchMs: config.timings.fsyncBatchMs,
      now: () => clock.now(),
      onRepair: (sessionId, report) =>
        logger.warn({ session: sessionId, ...report }, 'repaired the torn end of a session log'),
    });
    // Approvals: every permission request of a coding session is stored and decided once (rules, people, timeout).
    const approvals = new ApprovalDesk({
      db: kysely,
      clock,
      logger: logger.child({ component: 'approvals' }),
      config: config.approvals,
      rootOf: (workdir) => workspaceRoot(workdir, config.workspaces),
    });
    stops.push(() => approvals.stop());
    const harnesses = options.harnesses ?? createHarnesses(config, logger);
    // What this node tells the cluster: the harnesses it has, and how often it beats (and looks unasked for work).
    const harnessNames = HARNESS_NAMES.filter((h) => h in harnesses);
    const heartbeatMs = (config.cluster.heartbeatSec ?? config.cluster.nodeTimeoutSec / 5) * 1000;
    const nodeStore = new ClusterNodeStore(kysely);
    // Output, --follow and the SSE stream of a session on another node read its records from the database.
    const reader = records
      ? new ClusterRecordReader({
          logs,
          isLocal: (id) => sessions.liveById(id) !== undefined,
          database: records,
          clock,
          logger: logger.child({ component: 'cluster' }),
          pollMs: 2000,
        })
      : null;
    if (reader) stops.push(() => reader.close());
    const sessions: SessionManager = new SessionManager({
      config,
      permissions: approvals,
      clock,
      logger: logger.child({ component: 'sessions' }),
      store: new CodingSessionStore(kysely),
      logs,
      ...(reader ? { records: reader } : {}),
      harnesses,
      notices: new RestartNoticeStore(kysely),
      // While the cluster has this node down (a stall, until it rejoined), a launch reaching it is refused.
      serving: () => !cluster.fenced,
    });
    const idempotency = new Idempotency(new IdempotencyKeyStore(kysely, incarnation), clock);
    const inference = options.inference ?? createInference(config.inference, logger, { env });
    // The engine's tools act on the engine: it is built with a late-bound toolbox, bound below once the services are whole.
    const tools = lateToolbox();
    const engine = createEngine({
      config,
      clock,
      logger,
      db: kysely,
      home,
      inference,
      outbox,
      toolbox: tools,
      ...(records ? { mirror: records.engineMirror } : {}),
    });
    stops.push(() => primary.stopMember('engine'));
    // Cluster (PostgreSQL): the engine runs on the primary's holder; elsewhere its calls go through `engine_calls`.
    const engineCalls = records ? new EngineCallStore(kysely, { notify: true }) : null;
    const routedEngine = engineCalls
      ? new RoutedEngine({
          local: engine,
          servesEngine: () => primary.running().includes('engine'),
          calls: engineCalls,
          notices: records?.listener ?? null,
          clock,
          pollMs: 1000,
          timeoutMs: 30_000,
        })
      : engine;
    const scheduler = createScheduler({ db: kysely, engine: routedEngine, clock, logger, config });
    const notifications = createNotificationRouter({
      sessions,
      outbox,
      clock,
      config,
      threads: (channel) => connectors.some((c) => c.channel === channel && c.threads === true),
      logger: logger.child({ component: 'notify' }),
    });
    stops.push(() => notifications.stop());
    const approvalNotices = new ApprovalNotices({
      approvals,
      sessions,
      outbox,
      logger: logger.child({ component: 'approval-notices' }),
    });
    stops.push(() => approvalNotices.stop());
    stops.push(() => primary.stopMember('scheduler'));
    const wake = createWakeRouter({
      db: kysely,
      sessions,
      engine: routedEngine,
      heartbeat: scheduler.heartbeat,
      clock,
      logger,
      config,
    });
    stops.push(async () => {
      await primary.stopMember('wake');
      await wake.stop();
    });
    // Stopped before the wake router and the notifications, so the sessions it interrupts are still announced.
    stops.push(() => sessions.stop());
    // code_run (one coding turn with a watchdog) for the orchestrator, with or without Linear. In a cluster a run that
    // names no placement (a Linear mention's answer) is placed like the code_run operation's (bound below).
    let codeRunPlacement: CodeRunCluster | undefined;
    const codeRunner = new CodeRunner({
      config,
      sessions,
      logs,
      clock,
      logger: logger.child({ component: 'code-run' }),
      cluster: () => codeRunPlacement,
    });
    // GitHub: session_pr (commit, push, open the PR once) and the signed webhook's durable queue. Built before Linear:
    // passed Linear dispatches open their PRs through it.
    const github = config.github.enabled
      ? createGithubIntegration({ config, env, db: kysely, clock, logger, sessions })
      : null;
    if (github) stops.push(() => githubWorkers.stopMember('github'));

    // Linear: signed webhooks → router → pipeline, planner, triage, mentions. Refuses to start without a signing secret.
    const linear = config.linear.enabled
      ? createLinearIntegration({
          config,
          env,
          db: kysely,
          clock,
          logger,
          sessions,
          logs,
          engine: routedEngine,
          inference,
          outbox,
          codeRunner,
          approvals,
          ...(github ? { pullRequests: github.pullRequests } : {}),
          // Cluster (PostgreSQL): dispatches run on the nodes that claim them (see cluster/linear-dispatch-node.ts).
          ...(records
            ? {
                placement: nodePlacement(config, harnessNames, nodeStore),
                // Prompts and approval replies for a worker on another node run there (called once started).
                forwarder: {
                  node: config.node.name,
                  forward: (node: string, operation: string, args: Record<string, unknown>, caller: unknown) => {
                    if (!clusterSessions) throw new Error('the cluster sessions are not built');
                    return clusterSessions.forward(node, { operation, args, caller, from: config.node.name });
                  },
                },
              }
            : {}),
        })
      : null;
    if (linear) {
      // Stopped before the sessions: the pipeline leaves its running sessions to the SessionManager.
      stops.push(() => primary.stopMember('linear'));
    }

    // On PostgreSQL: the launch queue across the nodes and the commands for sessions on other nodes.
    const clusterSessions = records
      ? new ClusterSessions({
          db: kysely,
          listener: records.listener,
          config,
          clock,
          logger,
          sessions,
          harnesses: harnessNames,
          heartbeatMs,
        })
      : null;

    // This daemon as a node of the cluster (a cluster of one on SQLite): heartbeat, failure detection, leases.
    const cluster = new ClusterNode({
      store: nodeStore,
      leases: new LeaseStore(kysely),
      clock,
      logger: logger.child({ component: 'cluster' }),
      name: config.node.name,
      incarnation,
      labels: config.node.labels,
      harnesses: harnessNames,
      workspaces: config.workspaces.length > 0 ? config.workspaces : [homedir()],
      maxSessions: config.maxSessions,
      url: config.node.url ?? null,
      timeoutMs: config.cluster.nodeTimeoutSec * 1000,
      heartbeatMs,
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
      linear && records
        ? new LinearDispatchNode({
            pipeline: linear.pipeline,
            listener: records.listener,
            cluster,
            clock,
            heartbeatMs,
          })
        : null;

    // Every service the operations act on, built whole; only Linear and GitHub are absent by configuration.
    const services: OperationServices = {
      config,
      sessions,
      clock,
      engine: routedEngine,
      scheduler,
      wake,
      codeRunner,
      idempotency,
      approvals,
      cluster,
      ...(clusterSessions ? { clusterSessions } : {}),
      ...(linear ? { linear: linear.services } : {}),
      ...(github ? { github } : {}),
    };
    tools.bind(createOperationsToolbox({ ops: OPERATIONS, services }));
    if (clusterSessions) codeRunPlacement = codeRunCluster({ caller: { kind: 'rpc' }, services });

    const interrupted = await sessions.restore();
    notifications.start();
    approvalNotices.start();
    // Requests left pending by the previous process are cancelled (their agents are gone); their chat messages say so.
    // On PostgreSQL the restore cancels only this node's (other nodes' agents still wait for theirs).
    if (store.dialect === 'sqlite') await approvals.cancelStale();
    // Both are keyed per interruption: after a crash in between, the next start stores neither twice.
    await notifications.announceInterrupted(interrupted);
    faultPoint('sessions.restore.after-notice');
    await wake.announceInterrupted(interrupted);
    faultPoint('sessions.restore.before-clear');
    await sessions.restartNoticesStored(interrupted);
    sessions.startTimers();
    if (clusterSessions) {
      // Requests other nodes forward for this node's sessions run as the operations they name.
      await clusterSessions.start((request) => runForwarded(OPERATIONS, services, request));
      stops.push(() => clusterSessions.stop());
    }
    if (linearNode) {
      await linearNode.start();
      // Stopped before the sessions, like the primary's `linear`: running sessions are left to the SessionManager.
      stops.push(() => linearNode.stop());
    }

    const inbound = createInboundHandler({
      ops: OPERATIONS,
      services,
      engine: routedEngine,
      outbox,
      logger: logger.child({ component: 'inbound' }),
      commands: new InboundCommandStore(kysely),
    });
    // The singletons start at cluster.start() below (on SQLite this node takes them all there, before this resolves).
    // Every node stores its own sessions' wake events; the primary's holder delivers them.
    wake.startIntake();
    const chatConnectors: { name: string; service: { start(): Promise<void>; stop(): Promise<void> } }[] = [];
    for (const connector of connectors) {
      if (connector === web || slack.some((account) => account === connector && account.mode === 'http')) {
        // The web page and Slack's Events API (http mode) are served by every node's gateway: they run everywhere.
        stops.push(() => connector.stop());
        await connector.start(inbound);
        continue;
      }
      const name = connectorSingletonName(connector.channel, connector.account);
      stops.push(() => primary.stopMember(name));
      chatConnectors.push({ name, service: { start: () => connector.start(inbound), stop: () => connector.stop() } });
    }
    addPrimaryMembers(primary, {
      outbox,
      engine,
      rebuildEngine: records
        ? async () => {
            // Served again after losing the lease (a rejoin): the engine's write-through, refused for good meanwhile,
            // takes the new run's records (the logs are rebuilt from the table first).
            records.engineMirror.unfence();
            const rebuilt = await rebuildEngineLogs(records.store, join(home, 'engine'));
            logger.info(rebuilt, 'engine logs rebuilt from the database before the engine starts on this node');
          }
        : null,
      scheduler,
      wake,
      linear,
      connectors: chatConnectors,
      engineCalls: engineCalls
        ? new EngineCallWorker({
            engine,
            calls: engineCalls,
            notices: records?.listener ?? null,
            holder: () => cluster.incarnation,
            clock,
            logger: logger.child({ component: 'cluster' }),
            pollMs: 1000,
          })
        : null,
      listener: records?.listener ?? null,
      clock,
      logger: logger.child({ component: 'cluster' }),
      pollMs: heartbeatMs,
    });
    stops.push(() => primary.stopMember('poll'));
    stops.push(() => primary.stopMember('engine-calls'));
    if (records) {
      // log_records retention: the primary's holder deletes the records of session logs whose session is gone.
      primary.add(
        'record-retention',
        new RecordRetention({
          db: kysely,
          clock,
          logger: logger.child({ component: 'cluster' }),
          intervalMs: config.timings.cleanupIntervalMs,
          graceMs: config.timings.cleanupMaxAgeMs,
        }),
      );
      stops.push(() => primary.stopMember('record-retention'));
    }
    cluster.singletons.add('primary', primary);
    if (github) {
      githubWorkers.add('github', github);
      cluster.singletons.add('github', githubWorkers);
    }

    const token = await tokenOf('gateway.token');
    const webToken = web ? await tokenOf('web.token') : null;
    const hooksToken = config.hooks.enabled ? await tokenOf('hooks.token') : null;
    const app = await buildGateway({
      config,
      logger,
      token,
      ops: OPERATIONS,
      services,
      logs,
      ...(reader ? { records: reader } : {}),
      version: VERSION,
      startedAt,
      clock,
      ...(web && webToken ? { web: { connector: web, token: webToken, clock } } : {}),
      ...(slackHttpEndpoints(slack).length > 0 ? { slack: { endpoints: slackHttpEndpoints(slack) } } : {}),
      ...(hooksToken ? { hooks: { token: hooksToken, wake, heartbeat: scheduler.heartbeat, idempotency } } : {}),
      health: async () => ({
        outbox: await outbox.metrics(),
        wake: await wake.stats(),
        engineSessions: engine.listSessions().length,
      }),
    });
    // Cluster (PostgreSQL): a webhook delivery committed here wakes the worker of the node holding its lease.
    if (records) {
      const wakeups = new WebhookWakeups({
        db: kysely,
        notices: records.listener,
        workers: {
          ...(linear ? { linear: linear.webhooks.worker } : {}),
          ...(github?.webhook ? { github: github.webhook.worker } : {}),
        },
        clock,
        logger: logger.child({ component: 'cluster' }),
        pollMs: heartbeatMs,
      });
      announceWebhooks(app, (source) => wakeups.announce(source));
      wakeups.start();
      stops.push(async () => wakeups.stop());
    }
    if (linear) await registerLinearRoutes(app, { ...linear.routes, logger });
    if (github?.webhook) await registerGithubRoutes(app, github.webhook);
    await app.listen({ host: config.gateway.host, port: config.gateway.port });
    stops.push(() => app.close());
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.gateway.port;
    const host = config.gateway.host.includes(':') ? `[${config.gateway.host}]` : config.gateway.host;
    const url = `http://${host}:${port}`;
    await cluster.start(config.node.url ?? url);
    // Stopped last (just before the store): the services are stopped first in the daemon's order, then the leases are
    // given up and the node leaves (a clean leave is not taken for a lost node).
    stops.splice(stops.indexOf(closeStore) + 1, 0, () => cluster.stop());
    // A cluster of one serves every singleton: one that failed to start fails the start, as it did before clusters.
    if (store.dialect !== 'postgres' && !cluster.singletons.served().includes('primary'))
      throw primary.failure instanceof Error ? primary.failure : new Error('could not start the primary services');
    updateDaemonInfo(home, { pid: process.pid, startedAt, version: VERSION, url, port });
    logger.info(
      {
        url,
        home,
        version: VERSION,
        node: cluster.name,
        store: store.where,
        channels: connectors.map((c) => c.channel),
        inference: inference.available,
      },
      `switchboard daemon started — ${web ? `web page at ${url}/` : 'web page disabled'}`,
    );
    return { url, port, home, token, config, logger, services, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
