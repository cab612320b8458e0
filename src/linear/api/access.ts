// Builds the Linear access of one workspace from config: token resolution, OAuth, request budget, transport, client.
import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import type { LinearConfig } from '../../core/config-linear.ts';
import type { Logger } from '../../core/logger.ts';
import { LinearOAuthStore } from '../../store/linear-oauth.ts';
import type { Database } from '../../store/tables/index.ts';
import { LinearSdkApi } from './client.ts';
import type { CredentialSource, LinearCredential } from './credentials.ts';
import { LinearTokenResolver, readLinearSecrets } from './credentials.ts';
import { defaultRedirectUri, LinearOAuth } from './oauth.ts';
import { RequestBudget } from './request-budget.ts';
import { LinearTransport } from './transport.ts';

export interface LinearAccessDeps {
  config: LinearConfig;
  /** Used for the default OAuth redirect URI. */
  gateway: { host: string; port: number };
  env: NodeJS.ProcessEnv;
  /** The daemon's database (`sqliteKysely(db)` on SQLite): the OAuth tokens and states. */
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  /** Share one budget between every client of the same workspace; default: a new one. */
  budget?: RequestBudget;
}

/** Everything the daemon and the CLI need to talk to one Linear workspace. */
export interface LinearAccess {
  api: LinearSdkApi;
  oauth: LinearOAuth;
  tokens: LinearTokenResolver;
  budget: RequestBudget;
  oauthStore: LinearOAuthStore;
}

/** A credential source that always answers the same token (used to identify a token right after the code exchange). */
function fixedCredential(token: string): CredentialSource {
  const credential: LinearCredential = {
    source: 'oauth',
    kind: 'accessToken',
    token,
    label: 'new oauth token',
    expiresAt: null,
  };
  return { current: async () => credential, afterAuthFailure: async () => undefined };
}

/** Wires token resolution, OAuth, the request budget and the SDK client for one workspace. */
export function buildLinearAccess(deps: LinearAccessDeps): LinearAccess {
  const { config, clock, logger } = deps;
  const secrets = readLinearSecrets(config, deps.env);
  const budget =
    deps.budget ??
    new RequestBudget(clock, { perHour: config.requests.budgetPerHour, maxWaitMs: config.requests.maxRateLimitWaitMs });
  const transportFor = (credentials: CredentialSource): LinearTransport =>
    new LinearTransport({ apiUrl: config.apiUrl, credentials, budget, clock, logger, requests: config.requests });
  const oauthStore = new LinearOAuthStore(deps.db);
  const oauth = new LinearOAuth({
    oauth: config.oauth,
    clientSecret: secrets.clientSecret,
    redirectUri: defaultRedirectUri(config.oauth, deps.gateway),
    store: oauthStore,
    clock,
    logger,
    timeoutMs: config.requests.timeoutMs,
    identify: (accessToken) => new LinearSdkApi(transportFor(fixedCredential(accessToken))).identity(),
  });
  const tokens = new LinearTokenResolver({ config, env: deps.env, oauth });
  return { api: new LinearSdkApi(transportFor(tokens)), oauth, tokens, budget, oauthStore };
}
