// Linear's HTTP routes: signed webhooks (raw body kept, in their own parser scope) and the OAuth callback.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../core/logger.ts';
import type { LinearOAuth } from '../linear/api/oauth.ts';
import { handleOAuthCallback } from '../linear/api/oauth-callback.ts';
import type { WebhookIntake } from '../linear/webhooks/intake.ts';

export interface LinearRoutesDeps {
  intake: WebhookIntake;
  /** Serves GET /linear/oauth/callback when given. */
  oauth?: LinearOAuth;
  /** linear.webhooks.maxBodyBytes. */
  maxBodyBytes: number;
  logger: Logger;
}

/** The webhook paths: /linear/webhook (primary) and /hooks/linear (back-compat), one handler. */
export const LINEAR_WEBHOOK_PATHS = ['/linear/webhook', '/hooks/linear'] as const;

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Registers POST /linear/webhook, POST /hooks/linear and (with `oauth`) GET /linear/oauth/callback on `app`. The
 * webhook routes live in an encapsulated scope whose only content-type parser keeps the raw body as a Buffer (the
 * signature is over the exact bytes), limited to `maxBodyBytes` (413 beyond); other routes keep their parsers. The 200
 * is sent only after the delivery is durably queued; 401 for a missing or bad signature, 400 for a stale timestamp or a
 * body that is not JSON, 503 when the store fails.
 */
export async function registerLinearRoutes(app: FastifyInstance, deps: LinearRoutesDeps): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: deps.maxBodyBytes }, (_request, body, done) =>
      done(null, body),
    );
    const webhook = async (request: FastifyRequest, reply: FastifyReply) => {
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const result = await deps.intake.receive(raw, {
        signature: firstHeader(request.headers['linear-signature']),
        deliveryId: firstHeader(request.headers['linear-delivery']),
      });
      if (result.status === 200) return reply.code(200).type('text/plain; charset=utf-8').send('ok');
      return reply.code(result.status).send({ error: result.error });
    };
    for (const path of LINEAR_WEBHOOK_PATHS) scope.post(path, { bodyLimit: deps.maxBodyBytes }, webhook);
  });

  const oauth = deps.oauth;
  if (oauth) {
    app.get('/linear/oauth/callback', async (request, reply) => {
      const result = await handleOAuthCallback(oauth, request.query, deps.logger);
      return reply
        .code(result.status)
        .header('cache-control', 'no-store')
        .type('text/html; charset=utf-8')
        .send(result.html);
    });
  }
}
