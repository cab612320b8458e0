// `switchboard linear status`: which token is in use and until when, the OAuth installation, the webhook queue.
import type { LinearConfig } from '../../core/config-linear.ts';
import { errorMessage } from '../../core/errors.ts';
import type { LinearDeliveryStore } from '../../store/linear-deliveries.ts';
import type { DeliveryStatus } from '../../store/linear-delivery-types.ts';
import type { LinearSdkApi } from './client.ts';
import type { LinearTokenResolver, TokenSource } from './credentials.ts';
import { readLinearSecrets } from './credentials.ts';
import type { LinearOAuth } from './oauth.ts';

export interface LinearStatus {
  enabled: boolean;
  apiUrl: string;
  /** The token calls would use now; null when there is none. Never the token itself. */
  token: { source: TokenSource; label: string; kind: 'apiKey' | 'accessToken'; expiresAt: number | null } | null;
  oauth: {
    connected: boolean;
    organization: string | null;
    appUser: string | null;
    expiresAt: number | null;
    refreshable: boolean;
    scope: string | null;
    connectedAt: number | null;
  };
  webhookSecretConfigured: boolean;
  deliveries: Record<DeliveryStatus, number> | null;
  /** With `check`: the result of one live call with the token. */
  check?: { ok: true; appUser: string; organization: string } | { ok: false; error: string };
}

export interface StatusDeps {
  config: LinearConfig;
  env: NodeJS.ProcessEnv;
  tokens: LinearTokenResolver;
  oauth: LinearOAuth;
  deliveries?: LinearDeliveryStore;
  /** Given together with `check`, used for the live call. */
  api?: LinearSdkApi;
}

/** Collects the Linear status; with `check`, also asks Linear who the token is (one request, may refresh an OAuth token). */
export async function linearStatus(deps: StatusDeps, options: { check?: boolean } = {}): Promise<LinearStatus> {
  const credential = await deps.tokens.describe();
  const stored = await deps.oauth.storedTokens();
  const status: LinearStatus = {
    enabled: deps.config.enabled,
    apiUrl: deps.config.apiUrl,
    token: credential
      ? { source: credential.source, label: credential.label, kind: credential.kind, expiresAt: credential.expiresAt }
      : null,
    oauth: {
      connected: stored !== undefined,
      organization: stored?.organizationName ?? null,
      appUser: stored?.appUserName ?? null,
      expiresAt: stored?.expiresAt ?? null,
      refreshable: Boolean(stored?.refreshToken),
      scope: stored?.scope ?? null,
      connectedAt: stored?.createdAt ?? null,
    },
    webhookSecretConfigured: readLinearSecrets(deps.config, deps.env).webhookSecret !== undefined,
    deliveries: deps.deliveries ? await deps.deliveries.counts() : null,
  };
  if (options.check && deps.api) {
    try {
      const identity = await deps.api.identity();
      status.check = { ok: true, appUser: identity.appUserName ?? '?', organization: identity.organizationName ?? '?' };
    } catch (error) {
      status.check = { ok: false, error: errorMessage(error) };
    }
  }
  return status;
}

function when(at: number | null, now: number): string {
  if (at === null) return 'no expiry';
  const minutes = Math.round((at - now) / 60_000);
  const iso = new Date(at).toISOString();
  return minutes >= 0
    ? `expires ${iso} (in ${minutes >= 120 ? `${Math.round(minutes / 60)} h` : `${minutes} min`})`
    : `expired ${iso}`;
}

/** Renders the status as a few human lines. */
export function formatLinearStatus(status: LinearStatus, now: number): string {
  const lines = [`Linear: ${status.enabled ? 'enabled' : 'disabled'} (${status.apiUrl})`];
  if (status.token) {
    const refresh =
      status.token.source === 'oauth'
        ? status.oauth.refreshable
          ? ', refreshed automatically'
          : ', no refresh token'
        : '';
    lines.push(
      `token: ${status.token.label} (${status.token.kind === 'apiKey' ? 'personal API key' : 'OAuth access token'}), ${when(status.token.expiresAt, now)}${refresh}`,
    );
  } else {
    lines.push('token: none — run `switchboard linear connect`, or set linear.apiKey / LINEAR_API_KEY');
  }
  if (status.oauth.connected) {
    lines.push(
      `oauth: connected${status.oauth.organization ? ` to ${status.oauth.organization}` : ''}${status.oauth.appUser ? ` as ${status.oauth.appUser}` : ''}, scopes ${status.oauth.scope || '?'}`,
    );
  } else {
    lines.push('oauth: not connected');
  }
  lines.push(
    `webhook signing secret: ${status.webhookSecretConfigured ? 'set' : 'MISSING (webhooks are refused; set linear.webhookSecret)'}`,
  );
  if (status.deliveries) {
    const d = status.deliveries;
    lines.push(
      `webhook deliveries: ${d.pending} pending, ${d.processing} in progress, ${d.done} done, ${d.dead} dead-lettered`,
    );
  }
  if (status.check)
    lines.push(
      status.check.ok
        ? `check: ok — ${status.check.appUser} in ${status.check.organization}`
        : `check: FAILED — ${status.check.error}`,
    );
  return lines.join('\n');
}
