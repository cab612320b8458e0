// GitHub's HTTP route: POST /github/webhook, signed deliveries (the raw body kept, in its own parser scope).
import type { FastifyInstance } from 'fastify';
import type { GithubWebhookIntake } from '../github/webhooks/intake.ts';

/** What the route needs. */
export interface GithubRoutesDeps {
  intake: GithubWebhookIntake;
  /** The largest body taken in (413 beyond). */
  maxBodyBytes: number;
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Registers POST /github/webhook on `app`, in an encapsulated scope whose only content-type parser keeps the raw body
 * as a Buffer (the signature is over the exact bytes), limited to `maxBodyBytes`. The 200 is sent only after the
 * delivery is durably queued; 401 for a missing or bad signature, 400 for bad headers or a body that is not a JSON
 * object, 503 when the store fails.
 */
export async function registerGithubRoutes(app: FastifyInstance, deps: GithubRoutesDeps): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: deps.maxBodyBytes }, (_request, body, done) =>
      done(null, body),
    );
    scope.post('/github/webhook', { bodyLimit: deps.maxBodyBytes }, async (request, reply) => {
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const result = await deps.intake.receive(raw, {
        signature: firstHeader(request.headers['x-hub-signature-256']),
        deliveryId: firstHeader(request.headers['x-github-delivery']),
        event: firstHeader(request.headers['x-github-event']),
      });
      if (result.status === 200) return reply.code(200).type('text/plain; charset=utf-8').send('ok');
      return reply.code(result.status).send({ error: result.error });
    });
  });
}
