// Tells the cluster when the gateway committed a webhook delivery: a POST to /linear/webhook or /github/webhook answered
// 200 (sent only after the delivery is in its queue table) is announced, so the node running that webhook's worker
// wakes up (see cluster/webhook-wakeups.ts). Register before the routes.
import type { FastifyInstance } from 'fastify';

/** The webhook routes whose 200 means "committed", by the source they announce. */
const ANNOUNCED: Record<string, 'linear' | 'github'> = {
  '/linear/webhook': 'linear',
  '/github/webhook': 'github',
};

/** Adds an onResponse hook to `app` calling `announce(source)` after every 200 of a webhook route. */
export function announceWebhooks(app: FastifyInstance, announce: (source: 'linear' | 'github') => void): void {
  app.addHook('onResponse', async (request, reply) => {
    if (request.method !== 'POST' || reply.statusCode !== 200) return;
    const source = ANNOUNCED[request.routeOptions.url ?? ''];
    if (source) announce(source);
  });
}
