// The daemon's gateway: its tokens (shared by the cluster's nodes on PostgreSQL, files on SQLite), the Fastify server
// with the web page, Slack's Events API, /hooks, Linear's and GitHub's webhook routes, and where it listens.
import type { Kysely } from 'kysely';
import { slackHttpEndpoints } from '../channels/chat-connectors.ts';
import type { ClusterRecords } from '../cluster/cluster-records.ts';
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';
import { registerGithubRoutes } from '../gateway/github-routes.ts';
import { registerLinearRoutes } from '../gateway/linear-routes.ts';
import { buildGateway } from '../gateway/server.ts';
import type { Idempotency } from '../operations/idempotency.ts';
import type { OperationServices } from '../operations/operation.ts';
import { OPERATIONS } from '../operations/table.ts';
import { ClusterSecretStore } from '../store/cluster-secrets.ts';
import type { Database } from '../store/tables/index.ts';
import type { TokenName } from '../store/tokens.ts';
import { ensureToken, sharedToken } from '../store/tokens.ts';
import { VERSION } from '../version.ts';
import type { Chat } from './chat.ts';
import { shareWebhooks } from './cluster-postgres.ts';
import type { CodingSessions } from './coding-sessions.ts';
import type { Integrations } from './integrations.ts';
import type { Orchestrator } from './orchestrator.ts';
import type { Shutdown } from './shutdown.ts';

/** Where the gateway listens, and the token its callers present. */
export interface ServedGateway {
  url: string;
  port: number;
  token: string;
}

/**
 * Builds the gateway over the operations' `services`, registers the integrations' webhook routes (announced to the
 * cluster on PostgreSQL), and listens on `gateway.host`/`gateway.port`. Throws when the port is taken. The server
 * closes first at the daemon's stop.
 */
export async function serveGateway(deps: {
  config: Config;
  home: string;
  db: Kysely<Database>;
  dialect: 'sqlite' | 'postgres';
  clock: Clock;
  logger: Logger;
  startedAt: number;
  services: OperationServices;
  coding: Pick<CodingSessions, 'logs' | 'reader'>;
  chat: Chat;
  orchestrator: Pick<Orchestrator, 'engine' | 'wake' | 'scheduler'>;
  idempotency: Idempotency;
  integrations: Integrations;
  records: ClusterRecords | null;
  heartbeatMs: number;
  shutdown: Shutdown;
}): Promise<ServedGateway> {
  const { config, home, clock, logger } = deps;
  const { logs, reader } = deps.coding;
  const { outbox, connectors } = deps.chat;
  const { web, slack } = connectors;
  const { engine, wake, scheduler } = deps.orchestrator;
  const { linear, github } = deps.integrations;
  // Tokens: on PostgreSQL every node of the cluster shares them (made by the first node); on SQLite they are files.
  const secrets = new ClusterSecretStore(deps.db);
  const tokenOf = (name: TokenName): Promise<string> =>
    deps.dialect === 'postgres'
      ? sharedToken(home, name, secrets, clock.now())
      : Promise.resolve(ensureToken(home, name));
  const token = await tokenOf('gateway.token');
  const webToken = web ? await tokenOf('web.token') : null;
  const hooksToken = config.hooks.enabled ? await tokenOf('hooks.token') : null;
  const app = await buildGateway({
    config,
    logger,
    token,
    ops: OPERATIONS,
    services: deps.services,
    logs,
    ...(reader ? { records: reader } : {}),
    version: VERSION,
    startedAt: deps.startedAt,
    clock,
    ...(web && webToken ? { web: { connector: web, token: webToken, clock } } : {}),
    ...(slackHttpEndpoints(slack).length > 0 ? { slack: { endpoints: slackHttpEndpoints(slack) } } : {}),
    ...(hooksToken
      ? { hooks: { token: hooksToken, wake, heartbeat: scheduler.heartbeat, idempotency: deps.idempotency } }
      : {}),
    health: async () => ({
      outbox: await outbox.metrics(),
      wake: await wake.stats(),
      engineSessions: engine.listSessions().length,
    }),
  });
  // Cluster (PostgreSQL): a webhook delivery committed here wakes the worker of the node holding its lease.
  shareWebhooks({
    app,
    records: deps.records,
    db: deps.db,
    workers: {
      ...(linear ? { linear: linear.webhooks.worker } : {}),
      ...(github?.webhook ? { github: github.webhook.worker } : {}),
    },
    clock,
    logger,
    heartbeatMs: deps.heartbeatMs,
    shutdown: deps.shutdown,
  });
  if (linear) await registerLinearRoutes(app, { ...linear.routes, logger });
  if (github?.webhook) await registerGithubRoutes(app, github.webhook);
  await app.listen({ host: config.gateway.host, port: config.gateway.port });
  deps.shutdown.add('gateway', () => app.close());
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.gateway.port;
  const host = config.gateway.host.includes(':') ? `[${config.gateway.host}]` : config.gateway.host;
  return { url: `http://${host}:${port}`, port, token };
}
