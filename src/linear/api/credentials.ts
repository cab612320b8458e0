// Token resolution in the seed's order: the config token, then the stored OAuth tokens, then the environment.
import type { LinearConfig } from '../../core/config-linear.ts';
import { invalidInput } from '../../core/errors.ts';
import type { LinearOAuth } from './oauth.ts';
import { LinearApiError } from './types.ts';

/** Environment variables read last, in this order (an OAuth access token, then a personal API key). */
export const LINEAR_ENV_ACCESS_TOKEN = 'LINEAR_ACCESS_TOKEN';
export const LINEAR_ENV_API_KEY = 'LINEAR_API_KEY';

export type TokenSource = 'config' | 'oauth' | 'env';

/**
 * A token and how to send it: personal API keys go as `Authorization: <key>` (the SDK's `apiKey`), OAuth access tokens
 * as `Authorization: Bearer <token>` (the SDK's `accessToken`). Never log `token`.
 */
export interface LinearCredential {
  source: TokenSource;
  kind: 'apiKey' | 'accessToken';
  token: string;
  /** Where it came from, safe to show: `linear.apiKey`, `env LINEAR_API_KEY`, `oauth (default)`. */
  label: string;
  /** Epoch ms of expiry (OAuth), null when unknown or never. */
  expiresAt: number | null;
}

/** What a Linear transport needs from token resolution. */
export interface CredentialSource {
  /** The credential to use now (an OAuth token about to expire is refreshed first). Throws LinearApiError('auth') when there is none. */
  current(): Promise<LinearCredential>;
  /**
   * Called once after Linear refused `used` (401/403): a refreshed credential to retry with, or undefined when `used`
   * cannot be refreshed (a static key). Concurrent callers share one refresh.
   */
  afterAuthFailure(used: LinearCredential): Promise<LinearCredential | undefined>;
}

/** Resolves the Linear token: config (`apiKey`, then `apiKeyEnv`), stored OAuth tokens, env LINEAR_ACCESS_TOKEN / LINEAR_API_KEY. */
export class LinearTokenResolver implements CredentialSource {
  #config: LinearConfig;
  #env: NodeJS.ProcessEnv;
  #oauth: LinearOAuth | undefined;

  constructor(options: { config: LinearConfig; env: NodeJS.ProcessEnv; oauth?: LinearOAuth }) {
    this.#config = options.config;
    this.#env = options.env;
    this.#oauth = options.oauth;
  }

  /** The credential that would be used now, without refreshing anything; undefined when there is none. */
  async describe(): Promise<LinearCredential | undefined> {
    const fromConfig = this.#configToken();
    if (fromConfig) return fromConfig;
    const stored = await this.#oauth?.storedTokens();
    if (stored)
      return {
        source: 'oauth',
        kind: 'accessToken',
        token: stored.accessToken,
        label: `oauth (${stored.profile})`,
        expiresAt: stored.expiresAt,
      };
    return this.#envToken();
  }

  async current(): Promise<LinearCredential> {
    const fromConfig = this.#configToken();
    if (fromConfig) return fromConfig;
    const oauth = this.#oauth;
    if (oauth && (await oauth.storedTokens())) {
      const tokens = await oauth.freshTokens();
      if (tokens)
        return {
          source: 'oauth',
          kind: 'accessToken',
          token: tokens.accessToken,
          label: `oauth (${tokens.profile})`,
          expiresAt: tokens.expiresAt,
        };
    }
    const fromEnv = this.#envToken();
    if (fromEnv) return fromEnv;
    throw new LinearApiError(
      'auth',
      `no Linear token: set linear.apiKey (or linear.apiKeyEnv), run \`switchboard linear connect\`, or set ${LINEAR_ENV_ACCESS_TOKEN} / ${LINEAR_ENV_API_KEY}`,
    );
  }

  async afterAuthFailure(used: LinearCredential): Promise<LinearCredential | undefined> {
    if (used.source !== 'oauth' || !this.#oauth) return undefined;
    const tokens = await this.#oauth.refreshAfterRejection(used.token);
    if (!tokens) return undefined;
    return {
      source: 'oauth',
      kind: 'accessToken',
      token: tokens.accessToken,
      label: `oauth (${tokens.profile})`,
      expiresAt: tokens.expiresAt,
    };
  }

  #configToken(): LinearCredential | undefined {
    if (this.#config.apiKey)
      return { source: 'config', kind: 'apiKey', token: this.#config.apiKey, label: 'linear.apiKey', expiresAt: null };
    const name = this.#config.apiKeyEnv;
    const value = name ? this.#env[name]?.trim() : undefined;
    if (name && value)
      return { source: 'config', kind: 'apiKey', token: value, label: `linear.apiKeyEnv (${name})`, expiresAt: null };
    return undefined;
  }

  #envToken(): LinearCredential | undefined {
    const access = this.#env[LINEAR_ENV_ACCESS_TOKEN]?.trim();
    if (access)
      return {
        source: 'env',
        kind: 'accessToken',
        token: access,
        label: `env ${LINEAR_ENV_ACCESS_TOKEN}`,
        expiresAt: null,
      };
    const key = this.#env[LINEAR_ENV_API_KEY]?.trim();
    if (key) return { source: 'env', kind: 'apiKey', token: key, label: `env ${LINEAR_ENV_API_KEY}`, expiresAt: null };
    return undefined;
  }
}

/** The secrets the Linear integration reads from config or the environment. */
export interface LinearSecrets {
  webhookSecret: string | undefined;
  clientSecret: string | undefined;
}

/** Reads the webhook signing secret and the OAuth client secret: the config value first, then the named env var. */
export function readLinearSecrets(config: LinearConfig, env: NodeJS.ProcessEnv): LinearSecrets {
  return {
    webhookSecret: config.webhookSecret ?? (env[config.webhookSecretEnv]?.trim() || undefined),
    clientSecret: config.oauth.clientSecret ?? (env[config.oauth.clientSecretEnv]?.trim() || undefined),
  };
}

/**
 * The startup check of an enabled Linear integration: returns the secrets, or throws an invalid_input AppError naming
 * `linear.webhookSecret` when there is no webhook signing secret (unsigned webhooks are never accepted).
 */
export function requireLinearSecrets(
  config: LinearConfig,
  env: NodeJS.ProcessEnv,
): LinearSecrets & { webhookSecret: string } {
  const secrets = readLinearSecrets(config, env);
  if (!secrets.webhookSecret) {
    throw invalidInput(
      `linear.webhookSecret: Linear is enabled but no webhook signing secret is configured; set linear.webhookSecret or the ` +
        `environment variable ${config.webhookSecretEnv} (named by linear.webhookSecretEnv) to the signing secret of your Linear webhook`,
      'linear.webhookSecret',
    );
  }
  return { ...secrets, webhookSecret: secrets.webhookSecret };
}
