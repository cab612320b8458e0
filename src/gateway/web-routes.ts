// The built-in web page: GET / (the page, or a login form), its files under /web/assets/, the chat API of the web
// connector and its event stream. Session lists, output and messages go through /rpc and /sessions/:ref/events, which
// accept the page's cookie (see web-auth.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { WebConnector } from '../channels/web/web-connector.ts';
import { chatIdSchema, clientMessageIdSchema } from '../channels/web/web-ids.ts';
import type { Clock } from '../core/clock.ts';
import type { WebChannelConfig } from '../core/config-channels.ts';
import { AppError, formatZodError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { commandList } from '../operations/commands.ts';
import type { Operation } from '../operations/operation.ts';
import { bearerMatches } from './auth.ts';
import type { WebAsset } from './web-assets.ts';
import { loadWebAssets, PAGE_HEADERS } from './web-assets.ts';
import type { WebAuth } from './web-auth.ts';
import { requestFacts } from './web-auth.ts';
import { messageView, resumeVersion, streamChat } from './web-chat-stream.ts';

/** What the daemon (src/daemon/gateway.ts) hands the gateway for the web page (GatewayDeps.web). */
export interface WebGatewayDeps {
  /** The web chat connector (also registered with the outbox and started by src/daemon/chat.ts). */
  connector: WebConnector;
  /** The web token: `ensureToken(home, 'web.token')`. The page's cookie carries it. */
  token: string;
  clock: Clock;
  /** Where the page's files are (default src/gateway/web/). */
  assetDir?: string;
}

export interface WebRoutesDeps {
  auth: WebAuth;
  connector: WebConnector;
  clock: Clock;
  /** `config.channels.web`. */
  config: WebChannelConfig;
  /** The gateway token: the chat API also takes it as a bearer token. */
  gatewayToken: string;
  ops: readonly Operation[];
  logger: Logger;
  version: string;
  assetDir?: string;
}

const ERROR_STATUS: Record<AppError['kind'], number> = {
  invalid_input: 400,
  not_found: 404,
  limit: 429,
  conflict: 409,
  forbidden: 403,
  unavailable: 503,
  internal: 500,
};

const LOGIN_ERROR = '<p class="login-error" role="alert">That is not the gateway token.</p>';

/** Registers the web page's routes on the gateway. Expects `deps.auth` built from the same gateway token. */
export function registerWebRoutes(app: FastifyInstance, deps: WebRoutesDeps): void {
  const { auth, connector, config } = deps;
  const assets = loadWebAssets(deps.assetDir);
  const streams = new Set<() => void>();
  const messageSchema = z.strictObject({
    id: clientMessageIdSchema,
    text: z
      .string()
      .max(config.maxMessageLength, `must be at most ${config.maxMessageLength} characters`)
      .refine((t) => t.trim().length > 0, 'must not be empty'),
    /** True when the text is the command of a button the person pressed (InboundMessage.pressed). */
    pressed: z.boolean().optional(),
  });

  const asset = (name: string): WebAsset => {
    const found = assets.get(name);
    if (!found) throw new Error(`web page file ${name} is missing`);
    return found;
  };
  const sendPage = (reply: FastifyReply, status: number, body: Buffer | string): FastifyReply =>
    reply
      .code(status)
      .headers(PAGE_HEADERS)
      .header('cache-control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(body);
  const refuse = (reply: FastifyReply, status: number, reason: string): FastifyReply =>
    reply.code(status).headers(PAGE_HEADERS).header('cache-control', 'no-store').send({ error: reason });
  /**
   * The chat API takes the page's cookie or the gateway's bearer token, checked in `onRequest`, before any body is
   * read: a refused caller's connection is closed, whatever it still meant to send.
   */
  const apiAuth = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    if (bearerMatches(request.headers.authorization, deps.gatewayToken)) return undefined;
    const verdict = auth.authorize(requestFacts(request));
    if (verdict.ok) return undefined;
    return refuse(reply.header('connection', 'close'), verdict.status, verdict.reason);
  };
  const chatParam = (request: FastifyRequest<{ Params: { chat: string } }>, reply: FastifyReply): string | null => {
    const parsed = chatIdSchema.safeParse(request.params.chat);
    if (parsed.success) return parsed.data;
    void refuse(reply, 400, `chat: ${parsed.error.issues[0]?.message ?? 'invalid chat id'}`);
    return null;
  };

  app.addHook('preClose', (done) => {
    for (const end of [...streams]) end();
    done();
  });

  app.get('/', (request, reply) => {
    const facts = requestFacts(request);
    const reach = auth.reachable(facts);
    if (!reach.ok) return refuse(reply, reach.status, reach.reason);
    if (auth.mayAutoLogin(facts)) {
      reply.header('set-cookie', auth.setCookie(facts));
      return sendPage(reply, 200, asset('index.html').body);
    }
    if (auth.authorize(facts).ok) return sendPage(reply, 200, asset('index.html').body);
    return sendPage(reply, 200, asset('login.html').body.toString('utf8').replace('<!--error-->', ''));
  });

  app.get<{ Params: { name: string } }>('/web/assets/:name', (request, reply) => {
    const reach = auth.reachable(requestFacts(request));
    if (!reach.ok) return refuse(reply, reach.status, reach.reason);
    const found = assets.get(request.params.name);
    if (!found || request.params.name.endsWith('.html'))
      return refuse(reply, 404, `no page file ${request.params.name}`);
    return reply
      .code(200)
      .headers(PAGE_HEADERS)
      .header('cache-control', 'no-cache')
      .type(found.contentType)
      .send(found.body);
  });

  app.register(async (scope) => {
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 4096 },
      (_request, body, done) =>
        done(null, new URLSearchParams(typeof body === 'string' ? body : body.toString('utf8'))),
    );
    scope.post('/web/login', (request, reply) => {
      const facts = requestFacts(request);
      const form = request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
      const verdict = auth.login(facts, form.get('token') ?? '');
      if (!verdict.ok) {
        deps.logger.warn({ remote: facts.remoteAddress, reason: verdict.reason }, 'web login refused');
        if (verdict.status === 403) return refuse(reply, 403, verdict.reason);
        return sendPage(reply, 401, asset('login.html').body.toString('utf8').replace('<!--error-->', LOGIN_ERROR));
      }
      return reply
        .code(303)
        .headers(PAGE_HEADERS)
        .header('set-cookie', auth.setCookie(facts))
        .header('location', '/')
        .send();
    });
  });

  const cookieAuth = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const verdict = auth.authorize(requestFacts(request));
    return verdict.ok ? undefined : refuse(reply.header('connection', 'close'), verdict.status, verdict.reason);
  };
  app.post('/web/logout', { onRequest: cookieAuth }, (request, reply) => {
    const facts = requestFacts(request);
    return reply
      .code(303)
      .headers(PAGE_HEADERS)
      .header('set-cookie', auth.clearCookie(facts))
      .header('location', '/')
      .send();
  });

  app.get('/web/api/info', { onRequest: apiAuth }, (_request, reply) => {
    return reply
      .headers(PAGE_HEADERS)
      .header('cache-control', 'no-store')
      .send({
        version: deps.version,
        loginRequired: auth.loginRequired,
        maxMessageLength: config.maxMessageLength,
        sessionsRefreshMs: config.sessionsRefreshMs,
        commands: commandList(deps.ops),
      });
  });

  app.post<{ Params: { chat: string } }>(
    '/web/api/chats/:chat/messages',
    { onRequest: apiAuth },
    async (request, reply) => {
      const chatId = chatParam(request, reply);
      if (chatId === null) return reply;
      const body = messageSchema.safeParse(request.body);
      if (!body.success) return refuse(reply, 400, formatZodError(body.error));
      try {
        const result = await connector.accept(chatId, body.data);
        return reply
          .code(202)
          .headers(PAGE_HEADERS)
          .header('cache-control', 'no-store')
          .send({ duplicate: result.duplicate, message: messageView(result.message) });
      } catch (error) {
        if (error instanceof AppError) return refuse(reply, ERROR_STATUS[error.kind], error.message);
        throw error;
      }
    },
  );

  app.get<{ Params: { chat: string }; Querystring: { after?: string } }>(
    '/web/api/chats/:chat/events',
    { onRequest: apiAuth },
    async (request, reply) => {
      const chatId = chatParam(request, reply);
      if (chatId === null) return reply;
      const header = request.headers['last-event-id'];
      const resume = resumeVersion(Array.isArray(header) ? header[0] : header, request.query.after);
      if (!resume.ok) return refuse(reply, 400, 'after / Last-Event-ID: must be a whole number (a transcript version)');
      await streamChat(request, reply, chatId, resume.version, {
        connector,
        clock: deps.clock,
        keepAliveMs: config.keepAliveMs,
        headers: PAGE_HEADERS,
        track: (end) => {
          streams.add(end);
          return () => streams.delete(end);
        },
      });
      return reply;
    },
  );
}
