// A fake Linear on 127.0.0.1 that the real @linear/sdk talks to. Routes:
//   POST /graphql          GraphQL over the in-memory workspace (fake-linear-workspace.ts), matched on root fields
//   GET  /oauth/authorize  auto-approves: 302 to redirect_uri?code=…&state=…
//   POST /oauth/token      authorization_code and refresh_token grants; refresh tokens rotate (an old one is refused)
// Auth follows Linear: a personal API key as `Authorization: <key>`, an OAuth token as `Authorization: Bearer <token>`;
// anything else (or an expired token) gets 401. Every GraphQL request and every mutation is recorded. `script` queues
// one-shot answers: user errors over HTTP 200, HTTP statuses (401, 500, …), 429 rate limits with Linear's headers,
// dropped connections.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeGraphQLError, parseOperation, resolveRootField } from './fake-linear-graphql.ts';
import { FakeWorkspace } from './fake-linear-workspace.ts';
import { readBody } from './mock-http.ts';

export { FAKE_IDS, FakeWorkspace } from './fake-linear-workspace.ts';

/** A one-shot scripted answer. */
export type FakeLinearReply =
  | { kind: 'userError'; message?: string }
  | { kind: 'status'; status: number; message?: string }
  | { kind: 'rateLimit'; resetAt: number; limit?: number; retryAfterSec?: number }
  | { kind: 'drop' };

export interface FakeLinearScript {
  /** Root field or operation name the answer applies to; any request when omitted. */
  match?: string;
  reply: FakeLinearReply;
}

export interface RecordedGraphQLRequest {
  kind: 'query' | 'mutation';
  operationName: string | null;
  rootFields: string[];
  variables: Record<string, unknown>;
  authorization: string | undefined;
  features: string | undefined;
  /** HTTP status answered. */
  status: number;
}

export interface RecordedMutation {
  name: string;
  variables: Record<string, unknown>;
}

export interface FakeLinearOptions {
  /** Personal API keys accepted (default one: `lin_api_fake`). */
  apiKeys?: string[];
  oauthClient?: { clientId: string; clientSecret: string };
  /** Lifetime of issued OAuth access tokens in seconds (default 24 h, as Linear's). */
  accessTokenTtlSec?: number;
  /** Time source for token expiry (default Date.now). */
  now?: () => number;
  /** Project issues per page (default 50). */
  projectPageSize?: number;
  /** Port to listen on (default: a free one); lets a test restart the fake at the same URL. */
  port?: number;
}

export interface FakeLinear {
  url: string;
  graphqlUrl: string;
  authorizeUrl: string;
  tokenUrl: string;
  workspace: FakeWorkspace;
  requests: RecordedGraphQLRequest[];
  mutations: RecordedMutation[];
  /** Token endpoint calls: grant type, and whether they were granted. */
  tokenRequests: { grantType: string; ok: boolean }[];
  apiKeys: Set<string>;
  /** Queues one-shot answers, used in order by the first matching requests. */
  script(...entries: FakeLinearScript[]): void;
  /** Issues OAuth tokens directly (as if installed earlier). */
  issueTokens(ttlSec?: number): { accessToken: string; refreshToken: string; expiresAt: number };
  /** Makes an access token expire now (the next request with it gets 401). */
  expireAccessToken(token: string): void;
  /** Requests whose root fields include `field`. */
  requestsFor(field: string): RecordedGraphQLRequest[];
  close(): Promise<void>;
}

export const FAKE_OAUTH_CLIENT = { clientId: 'fake-client-id', clientSecret: 'fake-client-secret' };

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

const AUTH_ERROR = {
  errors: [
    {
      message: 'Authentication required, not authenticated',
      extensions: {
        type: 'authentication error',
        code: 'AUTHENTICATION_ERROR',
        statusCode: 401,
        userPresentableMessage: 'You need to authenticate to access this operation.',
      },
    },
  ],
};

/** Starts the fake on 127.0.0.1 (random port). */
export async function startFakeLinear(options: FakeLinearOptions = {}): Promise<FakeLinear> {
  const now = options.now ?? Date.now;
  const client = options.oauthClient ?? FAKE_OAUTH_CLIENT;
  const ttl = options.accessTokenTtlSec ?? 86_400;
  const workspace = new FakeWorkspace();
  const apiKeys = new Set(options.apiKeys ?? ['lin_api_fake']);
  const accessTokens = new Map<string, number>();
  const refreshTokens = new Set<string>();
  const codes = new Map<string, string>();
  const scripts: FakeLinearScript[] = [];
  const requests: RecordedGraphQLRequest[] = [];
  const mutations: RecordedMutation[] = [];
  const tokenRequests: { grantType: string; ok: boolean }[] = [];
  let sent = 0;

  const issueTokens = (ttlSec = ttl) => {
    const accessToken = `lin_oauth_${randomBytes(12).toString('hex')}`;
    const refreshToken = `lin_refresh_${randomBytes(12).toString('hex')}`;
    const expiresAt = now() + ttlSec * 1000;
    accessTokens.set(accessToken, expiresAt);
    refreshTokens.add(refreshToken);
    return { accessToken, refreshToken, expiresAt };
  };

  const authorized = (header: string | undefined): boolean => {
    if (!header) return false;
    if (header.startsWith('Bearer ')) {
      const expiry = accessTokens.get(header.slice(7));
      return expiry !== undefined && expiry > now();
    }
    return apiKeys.has(header);
  };

  const rateHeaders = (): Record<string, string> => ({
    'x-ratelimit-requests-limit': '5000',
    'x-ratelimit-requests-remaining': String(Math.max(0, 5000 - sent)),
    'x-ratelimit-requests-reset': String(now() + 3_600_000),
  });

  async function graphql(req: IncomingMessage, res: ServerResponse): Promise<void> {
    sent += 1;
    const body = JSON.parse(await readBody(req)) as { query: string; variables?: Record<string, unknown> };
    const op = parseOperation(body.query);
    const variables = body.variables ?? {};
    const record: RecordedGraphQLRequest = {
      kind: op.kind,
      operationName: op.name,
      rootFields: op.rootFields,
      variables,
      authorization: req.headers.authorization,
      features: typeof req.headers['graphql-features'] === 'string' ? req.headers['graphql-features'] : undefined,
      status: 200,
    };
    requests.push(record);
    const answer = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      record.status = status;
      sendJson(res, status, payload, { ...rateHeaders(), ...headers });
    };
    const index = scripts.findIndex((s) => !s.match || s.match === op.name || op.rootFields.includes(s.match));
    if (index !== -1) {
      const [{ reply }] = scripts.splice(index, 1) as [FakeLinearScript];
      if (reply.kind === 'drop') {
        record.status = 0;
        res.socket?.destroy();
        return;
      }
      if (reply.kind === 'userError') {
        const message = reply.message ?? 'Entity not found: AgentSession';
        return answer(200, {
          data: null,
          errors: [
            {
              message,
              path: op.rootFields.slice(0, 1),
              extensions: {
                type: 'invalid input',
                code: 'INPUT_ERROR',
                userError: true,
                userPresentableMessage: message,
              },
            },
          ],
        });
      }
      if (reply.kind === 'rateLimit') {
        const headers: Record<string, string> = {
          'x-ratelimit-requests-limit': String(reply.limit ?? 5000),
          'x-ratelimit-requests-remaining': '0',
          'x-ratelimit-requests-reset': String(reply.resetAt),
        };
        if (reply.retryAfterSec !== undefined) headers['retry-after'] = String(reply.retryAfterSec);
        return answer(
          429,
          {
            errors: [
              {
                message: 'Rate limit exceeded',
                extensions: { type: 'ratelimited', code: 'RATELIMITED', userPresentableMessage: 'Too many requests.' },
              },
            ],
          },
          headers,
        );
      }
      if (reply.status === 401) return answer(401, AUTH_ERROR);
      return answer(reply.status, {
        errors: [
          {
            message: reply.message ?? `Internal server error (${reply.status})`,
            extensions: { type: 'internal error', code: 'INTERNAL_SERVER_ERROR' },
          },
        ],
      });
    }
    if (!authorized(req.headers.authorization)) return answer(401, AUTH_ERROR);
    const data: Record<string, unknown> = {};
    try {
      for (const field of op.rootFields) {
        if (op.kind === 'mutation') mutations.push({ name: field, variables });
        data[field] = resolveRootField(workspace, field, variables, { projectPageSize: options.projectPageSize ?? 50 });
      }
    } catch (error) {
      if (!(error instanceof FakeGraphQLError)) throw error;
      return answer(error.status, {
        data: null,
        errors: [{ message: error.message, path: op.rootFields.slice(0, 1), extensions: error.extensions }],
      });
    }
    return answer(200, { data });
  }

  function authorize(url: URL, res: ServerResponse): void {
    const redirect = url.searchParams.get('redirect_uri');
    if (url.searchParams.get('client_id') !== client.clientId || !redirect) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('invalid client_id or redirect_uri');
      return;
    }
    const code = `code_${randomBytes(8).toString('hex')}`;
    codes.set(code, redirect);
    const back = new URL(redirect);
    back.searchParams.set('code', code);
    back.searchParams.set('state', url.searchParams.get('state') ?? '');
    res.writeHead(302, { location: back.toString() }).end();
  }

  async function token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = new URLSearchParams(await readBody(req));
    const grantType = form.get('grant_type') ?? '';
    const refuse = (status: number, error: string, description: string) => {
      tokenRequests.push({ grantType, ok: false });
      sendJson(res, status, { error, error_description: description });
    };
    if (form.get('client_id') !== client.clientId || form.get('client_secret') !== client.clientSecret)
      return refuse(401, 'invalid_client', 'Client authentication failed');
    if (grantType === 'authorization_code') {
      const code = form.get('code') ?? '';
      const redirect = codes.get(code);
      codes.delete(code);
      if (!redirect) return refuse(400, 'invalid_grant', 'The authorization code is invalid or was already used');
      if (redirect !== form.get('redirect_uri')) return refuse(400, 'invalid_grant', 'redirect_uri does not match');
    } else if (grantType === 'refresh_token') {
      const presented = form.get('refresh_token') ?? '';
      if (!refreshTokens.delete(presented))
        return refuse(400, 'invalid_grant', 'The refresh token is invalid or was already used');
    } else {
      return refuse(400, 'unsupported_grant_type', grantType);
    }
    const issued = issueTokens();
    tokenRequests.push({ grantType, ok: true });
    sendJson(res, 200, {
      access_token: issued.accessToken,
      token_type: 'Bearer',
      expires_in: ttl,
      scope: 'read,write,app:assignable,app:mentionable',
      refresh_token: issued.refreshToken,
    });
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const run = async () => {
      if (req.method === 'POST' && url.pathname === '/graphql') return graphql(req, res);
      if (req.method === 'GET' && url.pathname === '/oauth/authorize') return authorize(url, res);
      if (req.method === 'POST' && url.pathname === '/oauth/token') return token(req, res);
      sendJson(res, 404, { error: `no route ${req.method} ${url.pathname}` });
    };
    run().catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { errors: [{ message: String(error) }] });
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    graphqlUrl: `${base}/graphql`,
    authorizeUrl: `${base}/oauth/authorize`,
    tokenUrl: `${base}/oauth/token`,
    workspace,
    requests,
    mutations,
    tokenRequests,
    apiKeys,
    script: (...entries) => void scripts.push(...entries),
    issueTokens,
    expireAccessToken: (tokenValue) => void accessTokens.set(tokenValue, 0),
    requestsFor: (field) => requests.filter((r) => r.rootFields.includes(field)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
