// Calls to Linear's OAuth token endpoint (authorization_code and refresh_token grants), with zod-checked answers.
import { z } from 'zod';
import type { TokenGrant } from '../../store/linear-oauth.ts';
import { LinearApiError } from './types.ts';

const tokenResponseSchema = z.object({
  access_token: z.string().min(1),
  token_type: z.string().default('Bearer'),
  expires_in: z.number().positive().optional(),
  scope: z.union([z.string(), z.array(z.string())]).optional(),
  refresh_token: z.string().min(1).optional(),
});

const tokenErrorSchema = z.object({ error: z.string(), error_description: z.string().optional() });

export interface TokenEndpointOptions {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  timeoutMs: number;
}

export type TokenRequest =
  { grant: 'authorization_code'; code: string; redirectUri: string } | { grant: 'refresh_token'; refreshToken: string };

/**
 * POSTs one grant to the token endpoint (form-encoded, as OAuth 2 wants) and returns the grant with an absolute expiry
 * computed from `now`. Throws LinearApiError: 'auth' when Linear refuses the code or refresh token (4xx), 'server' on 5xx,
 * 'network' when it cannot be reached. Neither the secret nor the tokens appear in an error message.
 */
export async function requestToken(
  options: TokenEndpointOptions,
  request: TokenRequest,
  now: number,
): Promise<TokenGrant> {
  const form = new URLSearchParams({ client_id: options.clientId, client_secret: options.clientSecret });
  if (request.grant === 'authorization_code') {
    form.set('grant_type', 'authorization_code');
    form.set('code', request.code);
    form.set('redirect_uri', request.redirectUri);
  } else {
    form.set('grant_type', 'refresh_token');
    form.set('refresh_token', request.refreshToken);
  }
  let response: Response;
  try {
    response = await fetch(options.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
      signal: AbortSignal.timeout(options.timeoutMs),
    });
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    const detail = cause instanceof Error ? cause.message : error instanceof Error ? error.message : String(error);
    throw new LinearApiError('network', `Linear token endpoint unreachable (${request.grant}): ${detail}`);
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    const parsed = tokenErrorSchema.safeParse(body);
    const reason = parsed.success
      ? `${parsed.data.error}${parsed.data.error_description ? `: ${parsed.data.error_description}` : ''}`
      : `HTTP ${response.status}`;
    if (response.status >= 500)
      throw new LinearApiError('server', `Linear token endpoint failed (${request.grant}): ${reason}`);
    throw new LinearApiError(
      'auth',
      `Linear refused the ${request.grant === 'refresh_token' ? 'refresh token' : 'authorization code'}: ${reason}`,
    );
  }
  const parsed = tokenResponseSchema.safeParse(body);
  if (!parsed.success)
    throw new LinearApiError(
      'server',
      `Linear token endpoint answered without a usable access_token (HTTP ${response.status})`,
    );
  const data = parsed.data;
  return {
    accessToken: data.access_token,
    refreshToken: data.refresh_token ?? null,
    tokenType: data.token_type,
    scope: Array.isArray(data.scope) ? data.scope.join(',') : (data.scope ?? ''),
    expiresAt: data.expires_in !== undefined ? now + Math.round(data.expires_in * 1000) : null,
  };
}
