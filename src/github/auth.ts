// Where switchboard's GitHub credentials come from: a token (`github.token`, else the variable `github.tokenEnv`), or a
// GitHub App (`github.app`: its private key from `privateKeyEnv`), and the webhook secret. Read once at start.
import type { GithubConfig } from '../core/config-github.ts';

/** The credentials found, or why there are none. */
export type GithubAuth =
  | { kind: 'token'; token: string; source: string }
  | { kind: 'app'; appId: string; privateKey: string; installationId: number; source: string }
  | { kind: 'missing'; reason: string };

/** Resolves the credentials of `config` from itself and `env`. A configured App wins over a token. */
export function resolveGithubAuth(config: GithubConfig, env: NodeJS.ProcessEnv): GithubAuth {
  const app = config.app;
  if (app) {
    const privateKey = env[app.privateKeyEnv]?.replace(/\\n/g, '\n');
    if (!privateKey) return { kind: 'missing', reason: `github.app: the variable ${app.privateKeyEnv} is not set` };
    const installationId = Number(app.installationId);
    if (!Number.isInteger(installationId) || installationId <= 0)
      return { kind: 'missing', reason: 'github.app.installationId is not a number' };
    return {
      kind: 'app',
      appId: String(app.appId),
      privateKey,
      installationId,
      source: `GitHub App ${String(app.appId)}`,
    };
  }
  if (config.token) return { kind: 'token', token: config.token, source: 'github.token' };
  const fromEnv = env[config.tokenEnv];
  if (fromEnv) return { kind: 'token', token: fromEnv, source: `$${config.tokenEnv}` };
  return { kind: 'missing', reason: `neither github.token nor the variable ${config.tokenEnv} is set` };
}

/** The webhook secret (`github.webhookSecret`, else the variable `github.webhookSecretEnv`), if any. */
export function resolveWebhookSecret(config: GithubConfig, env: NodeJS.ProcessEnv): string | undefined {
  return config.webhookSecret ?? (env[config.webhookSecretEnv] || undefined);
}
