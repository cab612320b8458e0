// POST /hooks/wake {text, mode}: wakes the orchestrator now, or queues the text for the next heartbeat. Behind its own
// token (`hooks.token`); the gateway token is refused here, and the hooks token is refused on /rpc. An idempotency key
// (`Idempotency-Key` header or `idempotencyKey` field) makes a repeat answer the first answer (core/idempotency.ts).
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import type { Config } from '../core/config.ts';
import { AppError, errorMessage } from '../core/errors.ts';
import { faultPoint } from '../core/fault.ts';
import type { Logger } from '../core/logger.ts';
import type { Heartbeat } from '../engine/scheduler/heartbeat.ts';
import type { WakeRouter } from '../engine/wake/wake-router.ts';
import type { Idempotency, KeyCommit, KeyedAnswer } from '../operations/idempotency.ts';
import { IdempotencyError, idempotencyKeySchema, keyDigest } from '../operations/idempotency.ts';

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
  /** The durable idempotency keys (an `Idempotency-Key` header or `idempotencyKey` field makes a repeat answer the first answer). */
  idempotency: Pick<Idempotency, 'run' | 'atomically'>;
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
    text: z
      .string({ error: 'required, a string' })
      .trim()
      .min(1, 'must not be empty')
      .max(maxTextChars, `at most ${maxTextChars} characters (hooks.maxTextChars)`),
    mode: z.enum(['now', 'next-heartbeat'], { error: 'must be "now" or "next-heartbeat"' }).default('now'),
    idempotencyKey: z.string().optional(),
  });
}

function badRequest(reply: FastifyReply, message: string, field?: string): FastifyReply {
  return reply.code(400).send({ error: message, ...(field ? { field } : {}) });
}

/** The idempotency scope of POST /hooks/wake (callers with the hooks token). */
const HOOK_SCOPE = 'hooks:wake';

/** An answer of the wake route, as sent and as stored under an idempotency key. */
const hookAnswerSchema = z.object({ status: z.number().int(), body: z.record(z.string(), z.unknown()) });
type HookAnswer = z.infer<typeof hookAnswerSchema>;

/** The request's idempotency key: the `Idempotency-Key` header or the `idempotencyKey` field (the same if both). */
function idempotencyKeyOf(
  header: string | string[] | undefined,
  field: string | undefined,
): { ok: true; key: string | undefined } | { ok: false; message: string } {
  if (Array.isArray(header)) return { ok: false, message: 'Idempotency-Key: send the header once' };
  if (header !== undefined && field !== undefined && header !== field) {
    return {
      ok: false,
      message: 'idempotencyKey: the Idempotency-Key header and the idempotencyKey field differ; send one',
    };
  }
  const key = header ?? field;
  if (key === undefined) return { ok: true, key: undefined };
  const parsed = idempotencyKeySchema.safeParse(key);
  return parsed.success
    ? { ok: true, key: parsed.data }
    : { ok: false, message: `idempotencyKey: ${parsed.error.issues[0]?.message ?? 'invalid'}` };
}

/**
 * Runs one wake and returns its answer. `messageId` (from the idempotency key) makes the engine deduplicate a repeat;
 * `commit` records a 200 answer together with the queued heartbeat event (one transaction: a crash leaves both or
 * neither).
 */
async function wakeAnswer(
  deps: HookRouteDeps,
  text: string,
  mode: 'now' | 'next-heartbeat',
  messageId: string | undefined,
  commit: KeyCommit | null,
): Promise<HookAnswer> {
  const { logger } = deps;
  if (mode === 'next-heartbeat') {
    try {
      return await deps.idempotency.atomically(async (trx) => {
        const { event, nextRunAt } = await deps.heartbeat.queueEvent(text, 'hook', trx);
        const answer: HookAnswer = {
          status: 200,
          body: { ok: true, mode, queued: event.id, nextHeartbeatAt: new Date(nextRunAt).toISOString() },
        };
        await commit?.commitIn(trx, answer);
        faultPoint('hooks.wake.before-commit');
        return answer;
      });
    } catch (error) {
      if (error instanceof AppError) {
        logger.warn({ mode, err: error.message }, 'hook wake refused');
        return { status: 503, body: { error: error.message } };
      }
      throw error;
    }
  }
  let delivery: Awaited<ReturnType<HookRouteDeps['wake']['deliver']>>;
  try {
    delivery = await deps.wake.deliver(text, 'hook', messageId);
  } catch (error) {
    logger.error(
      { mode, chars: text.length, err: errorMessage(error) },
      'hook wake could not be accepted by the engine',
    );
    return {
      status: 503,
      body: {
        error: `the engine could not accept the wake (${errorMessage(error)}); nothing was queued, send it again shortly`,
      },
    };
  }
  faultPoint('hooks.wake.after-deliver');
  if (!delivery) {
    logger.warn(
      { mode, chars: text.length },
      'hook wake undelivered: no foreground user session, no heartbeat session, no heartbeat to run',
    );
    return {
      status: 503,
      body: {
        error:
          'no session could take the wake: there is no foreground user session and no heartbeat session yet. Message the bot once from a chat (that creates a user session), or send it with mode "next-heartbeat".',
      },
    };
  }
  logger.info(
    { mode, chars: text.length, to: delivery.sessionId, via: delivery.via, duplicate: delivery.duplicate },
    'hook wake delivered',
  );
  return {
    status: 200,
    body: {
      ok: true,
      mode,
      sessionId: delivery.sessionId,
      messageId: delivery.messageId,
      via: delivery.via,
      duplicate: delivery.duplicate,
    },
  };
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
    throw new Error(
      'hooks.token is the same as gateway.token; each must be its own secret (delete hooks.token to have a new one made)',
    );
  }
  const schema = bodySchema(config.hooks.maxTextChars);
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
    scope.addHook('onRequest', async (request, reply) => {
      const given = presentedToken(request.headers);
      if (given === undefined || !sameToken(given, deps.token)) {
        logger.warn(
          { path: request.url, presented: given !== undefined },
          'hook request refused: missing or wrong hooks token',
        );
        // Refused before the body is read; the connection is closed, whatever the caller still meant to send.
        return reply.code(401).header('www-authenticate', 'Bearer').header('connection', 'close').send({
          error:
            'missing or invalid hooks token: send Authorization: Bearer <token from hooks.token> (or x-switchboard-token); the gateway token is not accepted here',
        });
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
        return badRequest(
          reply,
          'body: expected a JSON object {"text": "...", "mode": "now" | "next-heartbeat"}',
          'body',
        );
      }
      const parsed = schema.safeParse(body);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        if (issue?.code === 'unrecognized_keys')
          return badRequest(
            reply,
            `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')} (accepted: text, mode, idempotencyKey)`,
            issue.keys[0],
          );
        const field = issue?.path.map(String).join('.') || 'body';
        return badRequest(
          reply,
          parsed.error.issues.map((i) => `${i.path.map(String).join('.') || 'body'}: ${i.message}`).join('; '),
          field,
        );
      }
      const { text, mode } = parsed.data;
      const key = idempotencyKeyOf(request.headers['idempotency-key'], parsed.data.idempotencyKey);
      if (!key.ok) return badRequest(reply, key.message, 'idempotencyKey');
      if (key.key === undefined) {
        const answer = await wakeAnswer(deps, text, mode, undefined, null);
        return reply.code(answer.status).send(answer.body);
      }
      const keyed = { scope: HOOK_SCOPE, key: key.key, body: { text, mode } };
      let answer: KeyedAnswer;
      try {
        answer = await deps.idempotency.run(keyed, async (commit) => {
          const result = await wakeAnswer(deps, text, mode, `hook-${keyDigest(HOOK_SCOPE, keyed.key)}`, commit);
          return result.status === 200 ? { kind: 'answer', response: result } : { kind: 'no-effect', response: result };
        });
      } catch (error) {
        if (error instanceof IdempotencyError) {
          logger.warn({ mode, reason: error.reason }, 'hook wake refused: idempotency key');
          return reply
            .code(error.reason === 'mismatch' ? 422 : 409)
            .send({ error: error.message, field: 'idempotencyKey' });
        }
        throw error;
      }
      const stored = hookAnswerSchema.parse(answer.response);
      if (answer.replayed)
        logger.info({ mode }, 'hook wake repeated under its idempotency key; answered with the first answer');
      return reply
        .code(stored.status)
        .header('idempotent-replayed', answer.replayed ? 'true' : 'false')
        .send(stored.body);
    });
  });
}
