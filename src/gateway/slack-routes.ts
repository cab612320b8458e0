// Slack's Events API over HTTP: POST /slack/events (events, interactivity and the slash command all post here). The
// raw body is kept as a Buffer (the signature is over the exact bytes), bounded, and the signature is checked before
// anything of it is parsed: Slack's v0 HMAC-SHA256 under each http-mode account's signing secret, a timestamp within
// five minutes, compared in constant time, and a signature already used refused as a replay. The account whose secret
// signed the request processes it; the response (sent once the message is durably accepted) is the acknowledgement.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { SlackHttpEndpoint } from '../channels/slack/slack-connector.ts';
import type { SignatureVerdict } from '../channels/slack/slack-signature.ts';
import type { Logger } from '../core/logger.ts';

/** The path Slack's Request URLs point at. */
export const SLACK_EVENTS_PATH = '/slack/events';
/** The largest body accepted (Slack's payloads are a few kilobytes). */
export const SLACK_MAX_BODY_BYTES = 256 * 1024;

export interface SlackRoutesDeps {
  /** One per http-mode account. */
  endpoints: readonly SlackHttpEndpoint[];
  logger: Logger;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Of several refusals, the one that says most (a replay or a stale timestamp is the same under every secret). */
const RANK: Record<SignatureVerdict, number> = { ok: 4, replayed: 3, stale: 2, forged: 1, missing: 0 };

/**
 * Registers POST /slack/events in its own scope (the only parser keeps the raw body, at most SLACK_MAX_BODY_BYTES:
 * 413 beyond). 401 for a missing, forged, stale or replayed signature; else the account's answer (200 with what the
 * app acknowledged with, 400 for an unreadable body, 500 when the message could not be accepted: Slack retries).
 */
export async function registerSlackRoutes(app: FastifyInstance, deps: SlackRoutesDeps): Promise<void> {
  if (deps.endpoints.length === 0) return;
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: SLACK_MAX_BODY_BYTES }, (_request, body, done) =>
      done(null, body),
    );
    scope.post(SLACK_EVENTS_PATH, { bodyLimit: SLACK_MAX_BODY_BYTES }, async (request, reply) => {
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const timestamp = header(request, 'x-slack-request-timestamp');
      const signature = header(request, 'x-slack-signature');
      let verdict: SignatureVerdict = 'missing';
      let endpoint: SlackHttpEndpoint | undefined;
      for (const candidate of deps.endpoints) {
        const got = candidate.verify(raw, timestamp, signature);
        if (RANK[got] > RANK[verdict]) verdict = got;
        if (got === 'ok') {
          endpoint = candidate;
          break;
        }
      }
      if (!endpoint) {
        deps.logger.warn({ verdict }, 'Slack request refused: bad signature');
        return reply.code(401).send({ error: `signature ${verdict}` });
      }
      const retry = Number(header(request, 'x-slack-retry-num'));
      const retryReason = header(request, 'x-slack-retry-reason');
      try {
        const answer = await endpoint.handle({
          raw,
          contentType: header(request, 'content-type'),
          ...(Number.isInteger(retry) ? { retryNum: retry } : {}),
          ...(retryReason ? { retryReason } : {}),
        });
        if (answer.status !== 200) endpoint.forget(signature);
        return reply
          .code(answer.status)
          .type(answer.contentType ?? 'text/plain; charset=utf-8')
          .send(answer.body);
      } catch (error) {
        endpoint.forget(signature);
        deps.logger.warn(
          { err: error instanceof Error ? error.message : String(error), account: endpoint.account },
          'Slack request not processed; Slack will retry',
        );
        return reply.code(500).send({ error: 'not processed' });
      }
    });
  });
}
