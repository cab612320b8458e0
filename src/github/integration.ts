// The GitHub integration as src/main.ts builds it when `github.enabled`: the pull-request service of `session_pr`,
// and (when a webhook secret is set) the webhook intake and its worker.
import type { Kysely } from 'kysely';
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';
import { GithubDeliveryStore } from '../store/github-deliveries.ts';
import { SessionPullRequestStore } from '../store/github-pull-requests.ts';
import type { Database } from '../store/tables/index.ts';
import { resolveGithubAuth, resolveWebhookSecret } from './auth.ts';
import type { GithubApi } from './client.ts';
import { GithubRest } from './client.ts';
import type { GitRunner } from './git.ts';
import { runGit } from './git.ts';
import { SessionPullRequests } from './pull-requests.ts';
import { GithubWebhookIntake } from './webhooks/intake.ts';
import { GithubWebhookWorker } from './webhooks/worker.ts';

/** What the integration is built from. `api` and `git` replace the real ones in tests. */
export interface GithubIntegrationDeps {
  config: Config;
  env: NodeJS.ProcessEnv;
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  api?: GithubApi;
  git?: GitRunner;
}

/** The built integration. `webhook` is absent without a webhook secret. */
export interface GithubIntegration {
  pullRequests: SessionPullRequests;
  webhook?: { intake: GithubWebhookIntake; worker: GithubWebhookWorker; maxBodyBytes: number };
  /** The web page's base for session links (`gateway.publicUrl`, or loopback and the port). */
  pageBase(): string | undefined;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Largest webhook body taken in (GitHub caps payloads at 25 MB; review events are far smaller). */
export const GITHUB_WEBHOOK_MAX_BYTES = 5 * 1024 * 1024;

/** Builds the integration; throws when `github.enabled` but no credentials are found (`doctor` says which). */
export function createGithubIntegration(deps: GithubIntegrationDeps): GithubIntegration {
  const { config, env, db, clock } = deps;
  const logger = deps.logger.child({ component: 'github' });
  const github = config.github;
  let api = deps.api;
  if (!api) {
    const auth = resolveGithubAuth(github, env);
    if (auth.kind === 'missing') throw new Error(`github.enabled, but no credentials: ${auth.reason}`);
    api = new GithubRest(auth, github.apiUrl, logger);
  }
  const pullRequests = new SessionPullRequests({
    config: github,
    api,
    store: new SessionPullRequestStore(db),
    git: deps.git ?? runGit,
    clock,
    logger,
  });
  const secret = resolveWebhookSecret(github, env);
  let webhook: GithubIntegration['webhook'];
  if (secret) {
    const store = new GithubDeliveryStore(db);
    const worker = new GithubWebhookWorker({ store, clock, logger });
    const intake = new GithubWebhookIntake({ secret, store, clock, logger, onQueued: () => worker.notify() });
    webhook = { intake, worker, maxBodyBytes: GITHUB_WEBHOOK_MAX_BYTES };
  } else {
    logger.warn(
      { variable: github.webhookSecretEnv },
      'github: no webhook secret (github.webhookSecret / webhookSecretEnv); POST /github/webhook is not served',
    );
  }
  return {
    pullRequests,
    ...(webhook ? { webhook } : {}),
    pageBase: () =>
      config.gateway.publicUrl ?? (config.gateway.port > 0 ? `http://127.0.0.1:${config.gateway.port}` : undefined),
    start: async () => {
      await webhook?.worker.start();
    },
    stop: async () => {
      await webhook?.worker.stop();
    },
  };
}
