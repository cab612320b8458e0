// One error handler and one not-found handler for every gateway route. Registered on the root instance before any
// route or scope, so every scope (/rpc, /hooks/*, the web page, Linear's webhooks) inherits them. Every 5xx is logged,
// whether an error or the route itself produced it.
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from '../core/logger.ts';
import { RPC_ERRORS, rpcError } from './json-rpc.ts';

/** The HTTP status an error carries (Fastify's and http-errors' `statusCode`), else 500. */
function statusOf(error: unknown): number {
  const status = (error as Partial<FastifyError> | null)?.statusCode;
  return typeof status === 'number' && status >= 400 && status <= 599 ? status : 500;
}

/** Fastify's words for an error, made to name what is wrong where they do not. */
function messageOf(error: unknown): string {
  if ((error as Partial<FastifyError> | null)?.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return 'body: not valid JSON, or it has a "__proto__" key (refused)';
  }
  return error instanceof Error ? error.message : String(error);
}

/** True for a JSON-RPC route: its errors are JSON-RPC error objects. */
function isRpc(request: FastifyRequest): boolean {
  return request.routeOptions.url === '/rpc';
}

/** Installs the gateway's error and not-found handlers on `app`; call it before registering any route. */
export function registerErrorReplies(app: FastifyInstance, logger: Logger): void {
  const logged = new WeakSet<FastifyRequest>();
  app.setErrorHandler((error, request, reply) => {
    const status = statusOf(error);
    const message = messageOf(error);
    if (status >= 500) {
      logged.add(request);
      logger.error({ err: error, method: request.method, url: request.url, status }, 'gateway error');
    }
    if (isRpc(request)) {
      const code = status >= 500 ? RPC_ERRORS.internal : RPC_ERRORS.invalidRequest;
      return reply.code(status).send(rpcError(null, code, status >= 500 ? `internal error: ${message}` : message));
    }
    return reply.code(status).send({ error: message });
  });
  // A 5xx a route sends itself (503 when nothing can take a wake, 500 for an internal AppError) is logged too.
  // A callback hook: it runs after every response, and needs no promise to log.
  app.addHook('onResponse', (request, reply, done) => {
    if (reply.statusCode >= 500 && !logged.has(request)) {
      // 503 says "not now" (nothing can take it yet), not that the daemon failed.
      const level = reply.statusCode === 503 ? 'warn' : 'error';
      logger[level]({ method: request.method, url: request.url, status: reply.statusCode }, 'gateway answered 5xx');
    }
    done();
  });
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({ error: `no route ${request.method} ${request.url}` }),
  );
}
