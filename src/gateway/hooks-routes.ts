// POST /hooks/wake {text, mode}: wakes the orchestrator now, or queues the text for the next heartbeat. Behind its own
// token (`hooks.token`); the gateway token is refused here, and the hooks token is refused on /rpc.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import type { Config } from '../core/config.ts';
import { AppError, errorMessage } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { Heartbeat } from '../engine/scheduler/heartbeat.ts';
import type { WakeRouter } from '../engine/wake/wake-router.ts';

/** What the hook routes need from the daemon. */
export interface HookRouteDeps {
  /** The hooks token (`<home>/hooks.token`, from ensureToken(home, 'hooks.token')). */
  token: string;
  /** The gateway token: never accepted here; registering fails if both are the same. */
  gatewayToken: string;
  config: Pick<Config, 'hooks'>;
  logger: Logger;
  wake: Pick<WakeRouter, 'deliver'>;
  heartbeat: Pick<Heartbeat, 'queueEvent'>;
}

/** Constant-time comparison of a presented token with the expected one. */
function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The token a request presents: `Authorization: Bearer <token>` or `x-switchboard-token: <token>`. */
function presentedToken(headers: Record<string, string | string[] | undefined>): string | undefined {
  const auth = headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m) return m[1];
  }
  const header = headers['x-switchboard-token'];
  return typeof header === 'string' && header.trim() ? header.trim() : undefined;
}

function bodySchema(maxTextChars: number) {
  return z.strictObject({
    text: z.string({ error: 'required, a string' }).trim().min(1, 'must not be empty').max(maxTextChars, `at most ${maxTextChars} characters (hooks.maxTextChars)`),
    mode: z.enum(['now', 'next-heartbeat'], { error: 'must be "now" or "next-heartbeat"' }).default('now'),
  });
}

function badRequest(reply: FastifyReply, message: string, field?: string): FastifyReply {
  return reply.code(400).send({ error: message, ...(field ? { field } : {}) });
}

/**
 * Registers POST /hooks/wake on `app` (nothing when `hooks.enabled` is false). Throws when the hooks token equals the
 * gateway token. `now` answers 200 with where the text went (session, via) or 503 when nothing could take it;
 * `next-heartbeat` answers 200 with the queued event and the time of the next heartbeat, or 503 when the timer is off.
 */
export async function registerHookRoutes(app: FastifyInstance, deps: HookRouteDeps): Promise<void> {
  const { config, logger } = deps;
  if (!config.hooks.enabled) {
    logger.info('hooks are disabled (hooks.enabled = false): POST /hooks/* is not served');
    return;
  }
  if (sameToken(deps.token, deps.gatewayToken)) {
    throw new Error('hooks.token is the same as gateway.token; each must be its own secret (delete hooks.token to have a new one made)');
  }
  const schema = bodySchema(config.hooks.maxTextChars);
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
    scope.addHook('onRequest', async (request, reply) => {
      const given = presentedToken(request.headers);
      if (given === undefined || !sameToken(given, deps.token)) {
        logger.warn({ path: request.url, presented: given !== undefined }, 'hook request refused: missing or wrong hooks token');
        // Refused before the body is read; the connection is closed, whatever the caller still meant to send.
        return reply
          .code(401)
          .header('www-authenticate', 'Bearer')
          .header('connection', 'close')
          .send({ error: 'missing or invalid hooks token: send Authorization: Bearer <token from hooks.token> (or x-switchboard-token); the gateway token is not accepted here' });
      }
      return undefined;
    });

    scope.post('/hooks/wake', async (request, reply) => {
      const raw = typeof request.body === 'string' ? request.body : '';
      let body: unknown;
      try {
        body = raw.trim() ? JSON.parse(raw) : undefined;
      } catch (error) {
        return badRequest(reply, `body: not valid JSON (${errorMessage(error)})`, 'body');
      }
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        return badRequest(reply, 'body: expected a JSON object {"text": "...", "mode": "now" | "next-heartbeat"}', 'body');
      }
      const parsed = schema.safeParse(body);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        if (issue?.code === 'unrecognized_keys') return badRequest(reply, `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')} (accepted: text, mode)`, issue.keys[0]);
        const field = issue?.path.map(String).join('.') || 'body';
        return badRequest(reply, parsed.error.issues.map((i) => `${i.path.map(String).join('.') || 'body'}: ${i.message}`).join('; '), field);
      }
      const { text, mode } = parsed.data;
      if (mode === 'next-heartbeat') {
        try {
          const { event, nextRunAt } = deps.heartbeat.queueEvent(text, 'hook');
          return reply.code(200).send({ ok: true, mode, queued: event.id, nextHeartbeatAt: new Date(nextRunAt).toISOString() });
        } catch (error) {
          if (error instanceof AppError) {
            logger.warn({ mode, err: error.message }, 'hook wake refused');
            return reply.code(503).send({ error: error.message });
          }
          throw error;
        }
      }
      let delivery: Awaited<ReturnType<HookRouteDeps['wake']['deliver']>>;
      try {
        delivery = await deps.wake.deliver(text, 'hook');
      } catch (error) {
        logger.error({ mode, chars: text.length, err: errorMessage(error) }, 'hook wake could not be accepted by the engine');
        return reply.code(503).send({ error: `the engine could not accept the wake (${errorMessage(error)}); nothing was queued, send it again shortly` });
      }
      if (!delivery) {
        logger.warn({ mode, chars: text.length }, 'hook wake undelivered: no foreground user session, no heartbeat session, no heartbeat to run');
        return reply.code(503).send({
          error:
            'no session could take the wake: there is no foreground user session and no heartbeat session yet. Message the bot once from a chat (that creates a user session), or send it with mode "next-heartbeat".',
        });
      }
      logger.info({ mode, chars: text.length, to: delivery.sessionId, via: delivery.via }, 'hook wake delivered');
      return reply.code(200).send({ ok: true, mode, sessionId: delivery.sessionId, messageId: delivery.messageId, via: delivery.via, duplicate: delivery.duplicate });
    });
  });
}
