// How long the gateway waits for a request to arrive, so a client that opens connections and sends nothing, or sends
// headers and part of a body, cannot hold them (and their file descriptors and buffers) forever. Node's HTTP server
// enforces the header, whole-request and keep-alive limits; a socket idle timeout, on only while a body is arriving,
// enforces the body's. A closed connection takes its partial body with it.
import type { ServerOptions } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../core/config.ts';

type GatewayTimeouts = Pick<Config['gateway'], 'requestTimeoutSec' | 'bodyTimeoutSec'>;

/** The Fastify options that make Node's HTTP server close slow or idle connections within `gateway.*TimeoutSec`. */
export function connectionTimeoutOptions(gateway: GatewayTimeouts): {
  requestTimeout: number;
  keepAliveTimeout: number;
  http: ServerOptions;
} {
  const requestMs = Math.ceil(gateway.requestTimeoutSec * 1000);
  const bodyMs = Math.ceil(gateway.bodyTimeoutSec * 1000);
  const headersMs = Math.min(bodyMs, requestMs);
  return {
    requestTimeout: requestMs,
    keepAliveTimeout: bodyMs,
    http: {
      headersTimeout: headersMs,
      requestTimeout: requestMs,
      keepAliveTimeout: bodyMs,
      // Node checks the header and request limits on this interval (30 s by default); check often enough to honour them.
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(headersMs / 4))),
    },
  };
}

/**
 * Closes a connection whose request body goes quiet for `gateway.bodyTimeoutSec`: the socket's idle timeout is set
 * when a request's headers are in and cleared once its body has arrived (so streams and slow handlers are not cut).
 * Node destroys a socket whose timeout fires while nobody else listens for it.
 */
export function registerBodyTimeout(app: FastifyInstance, gateway: GatewayTimeouts): void {
  const bodyMs = Math.ceil(gateway.bodyTimeoutSec * 1000);
  // Callback hooks: nothing here waits, and Fastify runs a callback hook without a promise per request.
  app.addHook('onRequest', (request, _reply, done) => {
    request.raw.socket.setTimeout(bodyMs);
    done();
  });
  app.addHook('preValidation', (request, _reply, done) => {
    request.raw.socket.setTimeout(0);
    done();
  });
}
