import type { Config } from '../core/config.ts';
import { resolveGithubAuth, resolveWebhookSecret } from '../github/auth.ts';
import type { Check } from './doctor.ts';

/**
 * The GitHub check when `github.enabled`: its credentials are there (a token, or a GitHub App's private key; a failure
 * otherwise, since `session_pr` cannot push or open PRs without them) and its webhook secret (a warning without one:
 * POST /github/webhook is then not served). Reads the config and the environment only; calls no API.
 */
export function githubChecks(config: Config, env: NodeJS.ProcessEnv): Check[] {
  const github = config.github;
  if (!github.enabled) return [];
  const auth = resolveGithubAuth(github, env);
  if (auth.kind === 'missing') return [{ status: 'fail', label: 'GitHub', detail: auth.reason }];
  const webhook = resolveWebhookSecret(github, env)
    ? 'webhook secret present'
    : `no webhook secret (github.webhookSecret or $${github.webhookSecretEnv}): POST /github/webhook is not served`;
  return [
    {
      status: resolveWebhookSecret(github, env) ? 'ok' : 'warn',
      label: 'GitHub',
      detail: `${auth.source}; API at ${github.apiUrl}; ${webhook}`,
    },
  ];
}
