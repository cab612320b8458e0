import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import Fastify, { LogController } from 'fastify';
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import { invalidInput } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { isLoopback } from '../core/loopback.ts';
import type { Caller, Operation, OperationServices } from '../operations/operation.ts';
import { rpcMethods } from '../operations/rpc-methods.ts';
import type { SessionLogs, SessionRecordSource } from '../store/session-logs.ts';
import { localRecords } from '../store/session-logs.ts';
import { bearerMatches } from './auth.ts';
import { connectionTimeoutOptions, registerBodyTimeout } from './connection-limits.ts';
import { registerErrorReplies } from './error-replies.ts';
import { registerHealthz } from './healthz.ts';
import type { HookRouteDeps } from './hooks-routes.ts';
import { registerHookRoutes } from './hooks-routes.ts';
import { RPC_ERRORS, rpcError } from './json-rpc.ts';
import { handleRpcBody } from './rpc-body.ts';
import { registerSessionEvents } from './session-events.ts';
import type { SlackRoutesDeps } from './slack-routes.ts';
import { registerSlackRoutes } from './slack-routes.ts';
import { requestFacts, webAuthFor } from './web-auth.ts';
import type { WebGatewayDeps } from './web-routes.ts';
import { registerWebRoutes } from './web-routes.ts';

export interface GatewayDeps {
  config: Config;
  logger: Logger;
  token: string;
  ops: readonly Operation[];
  services: OperationServices;
  logs: SessionLogs;
  /** Where the SSE route reads sessions' records (any node's, in a cluster); default the local logs. */
  records?: SessionRecordSource;
  version: string;
  startedAt: number;
  /** The web page and its chat connector; served when `channels.web.enabled`. */
  web?: WebGatewayDeps;
  /** POST /hooks/wake: its own token and the services it uses; absent: no /hooks routes. */
  hooks?: Pick<HookRouteDeps, 'token' | 'wake' | 'heartbeat' | 'idempotency'>;
  /** POST /slack/events for the Slack accounts in http mode (authenticated by Slack's signature); absent: no route. */
  slack?: Pick<SlackRoutesDeps, 'endpoints'>;
  /** Extra figures for /healthz (delivery and wake counters); shown only to callers with the gateway token. */
  health?: () => Record<string, unknown> | Promise<Record<string, unknown>>;
  /** The daemon's clock (for /healthz uptime and SSE keep-alives); default the services' clock. */
  clock?: Clock;
}

/**
 * Builds the HTTP gateway: POST /rpc (JSON-RPC 2.0, batches, bearer token), GET /sessions/:ref/events (SSE) and
 * GET /healthz, with one error handler for every route and the request limits of `gateway.*` (batch and response
 * sizes, header and body timeouts). Refuses a non-loopback bind unless `gateway.allowRemote` is set.
 */
export async function buildGateway(deps: GatewayDeps): Promise<FastifyInstance> {
  const { config, logger, token } = deps;
  if (!isLoopback(config.gateway.host) && !config.gateway.allowRemote) {
    throw invalidInput(
      `gateway.host: refusing to listen on ${config.gateway.host}, which is reachable from other machines; set gateway.allowRemote to true to allow it`,
      'gateway.host',
    );
  }
  // Typed as Fastify's logger, so that the instance is FastifyInstance (a pino Logger would make it FastifyInstance<…, Logger>).
  const loggerInstance: FastifyBaseLogger = logger;
  const app = Fastify({
    loggerInstance,
    // Requests are not logged one by one (the daemon logs what it does with them); errors still are.
    logController: new LogController({ disableRequestLogging: true }),
    // No per-request child logger (it rebuilt the redacting serializers for every request): requests are not logged.
    childLoggerFactory: (parent) => parent,
    bodyLimit: 1_048_576,
    ...connectionTimeoutOptions(config.gateway),
  });
  // Before any route or scope, so that every one of them inherits them.
  registerErrorReplies(app, logger);
  registerBodyTimeout(app, config.gateway, deps.clock ?? deps.services.clock);
  const methods = rpcMethods(deps.ops);
  const limits = { maxBatch: config.gateway.maxBatch, maxResponseBytes: config.gateway.maxResponseBytes };
  const webAuth = config.channels.web.enabled && deps.web ? webAuthFor(config, token, deps.web.token) : null;
  // The bearer token, or the web page's cookie (same-origin, loopback rules: see web-auth.ts).
  const authorize = (request: FastifyRequest): boolean =>
    bearerMatches(request.headers.authorization, token) || (webAuth?.authorize(requestFacts(request)).ok ?? false);

  const clock = deps.clock ?? deps.services.clock;
  registerHealthz(app, {
    token,
    version: deps.version,
    startedAt: deps.startedAt,
    clock,
    activeSessions: () => deps.services.sessions.liveSessions().filter((s) => s.isActive).length,
    ...(deps.health ? { extra: deps.health } : {}),
  });

  /** The /rpc requests that came with the bearer token (the others came with the web page's cookie). */
  const withBearer = new WeakSet<FastifyRequest>();
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    // JSON by name as well as '*': Fastify caches the parser it found for a named type, and parses the header again
    // for every request that only the catch-all matches.
    scope.addContentTypeParser(['application/json', '*'], { parseAs: 'string' }, (_request, body, done) =>
      done(null, body),
    );
    // Before the body is read: a caller without the token never gets to send (or half-send) one. Which credential came
    // is remembered for the route (the token is compared once per request).
    // A callback hook: Fastify runs it without a promise per request.
    scope.addHook('onRequest', (request, reply, done) => {
      if (bearerMatches(request.headers.authorization, token)) {
        withBearer.add(request);
        done();
        return;
      }
      if (webAuth?.authorize(requestFacts(request)).ok) {
        done();
        return;
      }
      reply
        .code(401)
        .header('www-authenticate', 'Bearer')
        .header('connection', 'close')
        .send(
          rpcError(
            null,
            RPC_ERRORS.unauthorized,
            'missing or invalid bearer token (send Authorization: Bearer <token from gateway.token>)',
          ),
        );
    });
    scope.post('/rpc', async (request, reply) => {
      // The CLI says who it is; a call without the bearer token came with the web page's cookie.
      const caller: Caller = !withBearer.has(request)
        ? { kind: 'rpc', web: true }
        : request.headers['x-switchboard-client'] === 'cli'
          ? { kind: 'cli' }
          : { kind: 'rpc' };
      const body = typeof request.body === 'string' ? request.body : '';
      const { status, body: out } = await handleRpcBody(
        body,
        (method, params) => methods.get(method)?.call(params, caller, deps.services),
        logger,
        limits,
      );
      if (out === null) return reply.code(status === 200 ? 204 : status).send();
      return reply.code(status).header('content-type', 'application/json').send(out);
    });
  });

  registerSessionEvents(app, {
    sessions: deps.services.sessions,
    records: deps.records ?? localRecords(deps.logs),
    authorize,
    clock,
  });
  if (webAuth && deps.web)
    registerWebRoutes(app, {
      ...deps.web,
      auth: webAuth,
      config: config.channels.web,
      gatewayToken: token,
      ops: deps.ops,
      logger,
      version: deps.version,
    });
  if (deps.hooks) await registerHookRoutes(app, { ...deps.hooks, gatewayToken: token, config, logger });
  if (deps.slack) await registerSlackRoutes(app, { ...deps.slack, logger });
  return app;
}
