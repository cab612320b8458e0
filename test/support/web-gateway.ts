import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { InboundHandler, InboundMessage } from '../../src/channels/connector.ts';
import { formatTarget } from '../../src/channels/connector.ts';
import { WebConnector } from '../../src/channels/web/web-connector.ts';
import { systemClock } from '../../src/core/clock.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { buildGateway } from '../../src/gateway/server.ts';
import { runCommand } from '../../src/operations/commands.ts';
import type { OperationServices } from '../../src/operations/operation.ts';
import { OPERATIONS } from '../../src/operations/table.ts';
import { ensureToken } from '../../src/store/tokens.ts';
import { managerFixture } from './manager-fixture.ts';
import type { ManagerFixture } from './manager-fixture.ts';

/** A gateway with the web page on a real port, over a SessionManager with scripted harnesses. */
export interface WebGatewayFixture {
  manager: ManagerFixture;
  connector: WebConnector;
  app: FastifyInstance;
  port: number;
  gatewayToken: string;
  webToken: string;
  services: OperationServices;
  close(): Promise<void>;
}

/**
 * Stands in for the chat side of the daemon (the engine is built elsewhere): a chat command runs through the
 * operations table; any other text gets the canned reply `echo: <text>`. The reply is sent through the connector
 * after the handler resolved, as the engine would answer later. `pending` holds the replies still being sent.
 */
export function cannedChatHandler(connector: WebConnector, services: OperationServices, pending: Set<Promise<void>>): InboundHandler {
  return async (message: InboundMessage) => {
    const reply = (async () => {
      await new Promise((resolve) => setImmediate(resolve));
      const caller = { kind: 'chat' as const, channel: formatTarget(message.target), userId: message.userId };
      const answer = await runCommand(OPERATIONS, message.text, caller, services);
      await connector.send(message.target, { text: answer ?? `echo: ${message.text}`, replyTo: message.id });
    })();
    pending.add(reply);
    void reply.finally(() => pending.delete(reply));
  };
}

/**
 * Builds and starts the gateway with the web routes on 127.0.0.1 (ephemeral port). `handler` receives page messages
 * (default: cannedChatHandler); `overrides` are config overrides (e.g. `{ channels: { web: { requireLogin: true } } }`).
 */
export async function webGateway(options: { handler?: (connector: WebConnector, services: OperationServices) => InboundHandler; overrides?: Record<string, unknown> } = {}): Promise<WebGatewayFixture> {
  const manager = managerFixture(options.overrides ?? {});
  const logger = silentLogger();
  const clock = systemClock();
  const connector = new WebConnector({ db: manager.db, config: manager.config.channels.web, clock, logger });
  const services: OperationServices = { config: manager.config, sessions: manager.manager };
  const pending = new Set<Promise<void>>();
  await connector.start(options.handler ? options.handler(connector, services) : cannedChatHandler(connector, services, pending));
  const gatewayToken = ensureToken(manager.home, 'gateway.token');
  const webToken = ensureToken(manager.home, 'web.token');
  const app = await buildGateway({
    config: manager.config,
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
    app,
    port,
    gatewayToken,
    webToken,
    services,
    async close() {
      await Promise.allSettled([...pending]);
      await connector.stop();
      app.server.closeAllConnections();
      await app.close();
      await manager.close();
    },
  };
}
