// How long the gateway waits for a request to arrive, so a client that opens connections and sends nothing, or sends
// headers and part of a body, cannot hold them (and their file descriptors and buffers) forever. Node's HTTP server
// enforces the header, whole-request and keep-alive limits; a sweep over the sockets whose body is arriving enforces
// the body's. A closed connection takes its partial body with it.
import type { ServerOptions } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../core/clock.ts';
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
 * Closes a connection whose request body goes quiet for `gateway.bodyTimeoutSec`. A request is watched from its
 * headers until its body has arrived (so streams and slow handlers are not cut): a sweep every quarter of the timeout
 * looks at how many bytes each watched socket has read, and destroys one that read nothing for the whole timeout.
 * (A per-request socket timeout did the same at two timer re-arms per request, ~10 % of a small RPC round trip.)
 * The sweep runs on `clock` until the app closes.
 */
export function registerBodyTimeout(app: FastifyInstance, gateway: GatewayTimeouts, clock: Clock): void {
  const bodyMs = Math.ceil(gateway.bodyTimeoutSec * 1000);
  const watched = new Map<Socket, { bytes: number; since: number }>();
  const sweep = clock.every(Math.max(25, Math.floor(bodyMs / 4)), () => {
    const now = clock.now();
    for (const [socket, seen] of watched) {
      if (socket.destroyed) watched.delete(socket);
      else if (socket.bytesRead !== seen.bytes) watched.set(socket, { bytes: socket.bytesRead, since: now });
      else if (now - seen.since >= bodyMs) {
        watched.delete(socket);
        socket.destroy();
      }
    }
  });
  app.addHook('onClose', (_instance, done) => {
    sweep.cancel();
    watched.clear();
    done();
  });
  // Callback hooks: nothing here waits, and Fastify runs a callback hook without a promise per request.
  app.addHook('onRequest', (request, _reply, done) => {
    const socket = request.raw.socket;
    watched.set(socket, { bytes: socket.bytesRead, since: clock.now() });
    done();
  });
  app.addHook('preValidation', (request, _reply, done) => {
    watched.delete(request.raw.socket);
    done();
  });
}
