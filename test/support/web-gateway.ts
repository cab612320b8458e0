import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { InboundHandler } from '../../src/channels/connector.ts';
import type { DurableOutbox } from '../../src/channels/outbox.ts';
import { createOutbox } from '../../src/channels/outbox.ts';
import { WebConnector } from '../../src/channels/web/web-connector.ts';
import { systemClock } from '../../src/core/clock.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { createEngine } from '../../src/engine/create.ts';
import type { Engine } from '../../src/engine/engine.ts';
import { buildGateway } from '../../src/gateway/server.ts';
import { createInboundHandler } from '../../src/operations/inbound.ts';
import type { OperationServices } from '../../src/operations/operation.ts';
import { OPERATIONS } from '../../src/operations/table.ts';
import { sqliteKysely } from '../../src/store/kysely/connection.ts';
import { ensureToken } from '../../src/store/tokens.ts';
import type { ManagerFixture } from './manager-fixture.ts';
import { managerFixture } from './manager-fixture.ts';
import { ScriptedInference } from './scripted-inference.ts';

/**
 * The daemon's web path on a real port, wired as main.ts wires it: the gateway with the web routes, the web connector
 * registered with the durable outbox, and the real inbound handler (chat commands through the operations table, other
 * text into the engine, whose scripted model answers `echo: <text>`), over a SessionManager with scripted harnesses.
 */
export interface WebGatewayFixture {
  manager: ManagerFixture;
  connector: WebConnector;
  outbox: DurableOutbox;
  engine: Engine;
  inference: ScriptedInference;
  app: FastifyInstance;
  port: number;
  gatewayToken: string;
  webToken: string;
  services: OperationServices;
  close(): Promise<void>;
}

/**
 * Builds and starts it on 127.0.0.1 (ephemeral port). `handler` replaces the inbound handler (to hold or fail page
 * messages); `overrides` are config overrides (e.g. `{ channels: { web: { requireLogin: true } } }`).
 */
export async function webGateway(
  options: { handler?: (connector: WebConnector) => InboundHandler; overrides?: Record<string, unknown> } = {},
): Promise<WebGatewayFixture> {
  const overrides = options.overrides ?? {};
  const manager = managerFixture({
    ...overrides,
    engine: { stopGraceMs: 0, ...(overrides.engine as object | undefined) },
  });
  const { config, db, home } = manager;
  const logger = silentLogger();
  const clock = systemClock();
  const services: OperationServices = { config, sessions: manager.manager, clock };
  const connector = new WebConnector({ db: sqliteKysely(db), config: config.channels.web, clock, logger });
  const outbox = createOutbox({ db: sqliteKysely(db), config: config.channels.outbox, clock, logger });
  outbox.register(connector);
  await outbox.start();
  const inference = new ScriptedInference();
  const engine = createEngine({ config, clock, logger, db: sqliteKysely(db), home, inference, outbox });
  await engine.start();
  await connector.start(
    options.handler
      ? options.handler(connector)
      : createInboundHandler({ ops: OPERATIONS, services, engine, outbox, logger }),
  );
  const gatewayToken = ensureToken(home, 'gateway.token');
  const webToken = ensureToken(home, 'web.token');
  const app = await buildGateway({
    config,
    logger,
    token: gatewayToken,
    ops: OPERATIONS,
    services,
    logs: manager.logs,
    version: 'test',
    startedAt: Date.now(),
    web: { connector, token: webToken, clock },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as AddressInfo).port;
  return {
    manager,
    connector,
    outbox,
    engine,
    inference,
    app,
    port,
    gatewayToken,
    webToken,
    services,
    async close() {
      await connector.stop();
      await engine.stop();
      await outbox.stop();
      await app.close();
      await manager.close();
    },
  };
}
