// The Linear OAuth installation: authorize URL with a durable one-time state, code exchange, and refresh with exactly
// one request in flight (cleared when it settles, so the next expiry refreshes again).
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../core/clock.ts';
import type { LinearConfig } from '../../core/config-linear.ts';
import { AppError, errorMessage, invalidInput } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { LinearOAuthStore, StoredLinearTokens } from '../../store/linear-oauth.ts';
import type { TokenEndpointOptions } from './token-endpoint.ts';
import { requestToken } from './token-endpoint.ts';
import { LinearApiError } from './types.ts';

/** Who an access token acts as; looked up right after the code exchange. */
export interface TokenIdentity {
  appUserId: string | null;
  appUserName: string | null;
  organizationId: string | null;
  organizationName: string | null;
}

export interface LinearOAuthOptions {
  oauth: LinearConfig['oauth'];
  /** The resolved client secret (config or env); the exchange fails naming the key when missing. */
  clientSecret: string | undefined;
  /** The redirect URI sent to Linear (see `defaultRedirectUri`). */
  redirectUri: string;
  store: LinearOAuthStore;
  clock: Clock;
  logger: Logger;
  /** Timeout of one token-endpoint request. */
  timeoutMs: number;
  /** Looks up the app user and workspace of a new token; a failure is logged, the tokens are kept. */
  identify?: (accessToken: string) => Promise<TokenIdentity>;
  profile?: string;
}

/** The URL the browser is sent to, and the state that must come back with it. */
export interface AuthorizeRequest {
  url: string;
  state: string;
  expiresAt: number;
}

/** Query of the callback request, as Linear sends it. */
export interface CallbackQuery {
  code?: string | undefined;
  state?: string | undefined;
  error?: string | undefined;
  error_description?: string | undefined;
}

/** http://<gateway host>:<gateway port>/linear/oauth/callback, or `linear.oauth.redirectUri` when set. */
export function defaultRedirectUri(oauth: LinearConfig['oauth'], gateway: { host: string; port: number }): string {
  if (oauth.redirectUri) return oauth.redirectUri;
  const host = gateway.host === '0.0.0.0' || gateway.host === '::' ? '127.0.0.1' : gateway.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${gateway.port}/linear/oauth/callback`;
}

/** One Linear workspace installation (profile): authorize, callback, stored tokens, refresh. */
export class LinearOAuth {
  #o: LinearOAuthOptions;
  #profile: string;
  #inflight: Promise<StoredLinearTokens> | undefined;

  constructor(options: LinearOAuthOptions) {
    this.#o = options;
    this.#profile = options.profile ?? 'default';
  }

  get profile(): string {
    return this.#profile;
  }

  /**
   * Issues a random state (stored with its expiry) and resolves, once it is stored, the authorize URL carrying it.
   * Throws when no clientId is set.
   */
  async authorize(): Promise<AuthorizeRequest> {
    const { oauth, store, clock } = this.#o;
    if (!oauth.clientId)
      throw invalidInput(
        'linear.oauth.clientId: set the client id of your Linear OAuth application',
        'linear.oauth.clientId',
      );
    const state = randomBytes(32).toString('base64url');
    const now = clock.now();
    const expiresAt = now + oauth.stateTtlMs;
    await store.addState(state, this.#o.redirectUri, now, expiresAt);
    const url = new URL(oauth.authorizeUrl);
    url.searchParams.set('client_id', oauth.clientId);
    url.searchParams.set('redirect_uri', this.#o.redirectUri);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('scope', oauth.scopes.join(','));
    url.searchParams.set('state', state);
    url.searchParams.set('actor', oauth.actor);
    return { url: url.toString(), state, expiresAt };
  }

  /**
   * Handles the browser's return: validates the state exactly once (unknown, expired and reused states are refused with
   * a forbidden AppError), exchanges the code and stores the tokens. Records the outcome on the state for a waiting CLI.
   */
  async completeCallback(query: CallbackQuery): Promise<StoredLinearTokens> {
    const { store, clock } = this.#o;
    if (!query.state)
      throw invalidInput('state: missing from the callback; start again with `switchboard linear connect`', 'state');
    const { check, redirectUri } = await store.consumeState(query.state, clock.now());
    if (check !== 'ok') {
      const why = { unknown: 'was not issued by this daemon', expired: 'has expired', reused: 'was already used' }[
        check
      ];
      throw new AppError(
        'forbidden',
        `state: the OAuth state ${why}; start again with \`switchboard linear connect\``,
        'state',
      );
    }
    try {
      if (query.error)
        throw new AppError(
          'forbidden',
          `Linear did not authorize the app: ${query.error}${query.error_description ? ` (${query.error_description})` : ''}`,
        );
      if (!query.code) throw invalidInput('code: missing from the callback', 'code');
      const grant = await requestToken(
        this.#endpoint(),
        { grant: 'authorization_code', code: query.code, redirectUri: redirectUri ?? this.#o.redirectUri },
        clock.now(),
      );
      const identity = await this.#identify(grant.accessToken);
      await store.saveInstall(this.#profile, grant, identity, clock.now());
      this.#o.logger.info(
        {
          profile: this.#profile,
          organization: identity.organizationName,
          appUser: identity.appUserName,
          expiresAt: grant.expiresAt,
        },
        'linear oauth connected',
      );
      await store.setStateOutcome(query.state, 'connected');
      return (await store.tokens(this.#profile)) as StoredLinearTokens;
    } catch (error) {
      await store.setStateOutcome(query.state, `failed: ${errorMessage(error)}`);
      throw error;
    }
  }

  /** The stored tokens, as they are (no refresh). */
  async storedTokens(): Promise<StoredLinearTokens | undefined> {
    return this.#o.store.tokens(this.#profile);
  }

  /** The stored tokens, refreshed first when they expire within `refreshBeforeExpiryMs`. Undefined when never connected. */
  async freshTokens(): Promise<StoredLinearTokens | undefined> {
    const tokens = await this.storedTokens();
    if (!tokens) return undefined;
    const due =
      tokens.expiresAt !== null && tokens.expiresAt - this.#o.oauth.refreshBeforeExpiryMs <= this.#o.clock.now();
    if (!due || !tokens.refreshToken) return tokens;
    return this.refresh();
  }

  /**
   * After Linear refused `usedAccessToken`: when the stored token has changed meanwhile (another call refreshed it),
   * returns it as is; otherwise refreshes (shared). Undefined when there is no refresh token to use.
   */
  async refreshAfterRejection(usedAccessToken: string): Promise<StoredLinearTokens | undefined> {
    const tokens = await this.storedTokens();
    if (!tokens) return undefined;
    if (tokens.accessToken !== usedAccessToken) return tokens;
    if (!tokens.refreshToken) return undefined;
    return this.refresh();
  }

  /**
   * Refreshes the access token. Concurrent callers share the one request in flight; it is forgotten as soon as it
   * settles, success or failure, so a later expiry or a retry after a failure starts a new one. The rotated refresh
   * token is stored with the access token in one transaction.
   */
  refresh(): Promise<StoredLinearTokens> {
    if (this.#inflight) return this.#inflight;
    const pending = this.#doRefresh();
    this.#inflight = pending;
    const clear = (): void => {
      if (this.#inflight === pending) this.#inflight = undefined;
    };
    pending.then(clear, clear);
    return pending;
  }

  async #doRefresh(): Promise<StoredLinearTokens> {
    const { store, clock, logger } = this.#o;
    const tokens = await store.tokens(this.#profile);
    if (!tokens?.refreshToken)
      throw new LinearApiError(
        'auth',
        'Linear OAuth token cannot be refreshed (no refresh token stored); run `switchboard linear connect`',
      );
    try {
      const grant = await requestToken(
        this.#endpoint(),
        { grant: 'refresh_token', refreshToken: tokens.refreshToken },
        clock.now(),
      );
      const saved = await store.saveRefresh(this.#profile, grant, clock.now());
      logger.info(
        { profile: this.#profile, expiresAt: saved.expiresAt, rotated: grant.refreshToken !== null },
        'linear oauth token refreshed',
      );
      return saved;
    } catch (error) {
      logger.error({ profile: this.#profile, err: errorMessage(error) }, 'linear oauth token refresh failed');
      throw error;
    }
  }

  async #identify(accessToken: string): Promise<TokenIdentity> {
    const empty: TokenIdentity = { appUserId: null, appUserName: null, organizationId: null, organizationName: null };
    if (!this.#o.identify) return empty;
    try {
      return await this.#o.identify(accessToken);
    } catch (error) {
      this.#o.logger.warn(
        { err: errorMessage(error) },
        'linear oauth: could not look up the app user of the new token; it is kept',
      );
      return empty;
    }
  }

  #endpoint(): TokenEndpointOptions {
    const { oauth, clientSecret, timeoutMs } = this.#o;
    if (!oauth.clientId)
      throw invalidInput(
        'linear.oauth.clientId: set the client id of your Linear OAuth application',
        'linear.oauth.clientId',
      );
    if (!clientSecret) {
      throw invalidInput(
        `linear.oauth.clientSecret: set it, or the environment variable ${oauth.clientSecretEnv} (linear.oauth.clientSecretEnv)`,
        'linear.oauth.clientSecret',
      );
    }
    return { tokenUrl: oauth.tokenUrl, clientId: oauth.clientId, clientSecret, timeoutMs };
  }
}
