// The GitHub integration as src/main.ts builds it when `github.enabled`: the pull-request service of `session_pr`,
// and (when a webhook secret is set) the webhook intake, its worker and (given the sessions) the review loop.
import type { Kysely } from 'kysely';
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';
import { GithubDeliveryStore } from '../store/github-deliveries.ts';
import { SessionPullRequestStore } from '../store/github-pull-requests.ts';
import { GithubReworkStore } from '../store/github-reworks.ts';
import type { Database } from '../store/tables/index.ts';
import { resolveGithubAuth, resolveWebhookSecret } from './auth.ts';
import type { GithubApi } from './client.ts';
import { GithubRest } from './client.ts';
import type { GitRunner } from './git.ts';
import { runGit } from './git.ts';
import { SessionPullRequests } from './pull-requests.ts';
import type { ReworkSessions } from './rework.ts';
import { GithubReviewLoop } from './rework.ts';
import type { GithubThreadsApi } from './rework-api.ts';
import { GithubThreadsRest } from './rework-api.ts';
import type { GithubEvent } from './webhooks/events.ts';
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
  threads?: GithubThreadsApi;
  git?: GitRunner;
  /** The sessions reviews and mentions run in; without them, webhook events are only recorded. */
  sessions?: ReworkSessions;
}

/** The built integration. `webhook` is absent without a webhook secret. */
export interface GithubIntegration {
  pullRequests: SessionPullRequests;
  webhook?: { intake: GithubWebhookIntake; worker: GithubWebhookWorker; maxBodyBytes: number };
  /** The review loop and mentions (with a webhook secret and sessions). */
  rework?: GithubReviewLoop;
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
  let threads = deps.threads;
  if (!api || !threads) {
    const auth = resolveGithubAuth(github, env);
    if (auth.kind === 'missing') throw new Error(`github.enabled, but no credentials: ${auth.reason}`);
    api ??= new GithubRest(auth, github.apiUrl, logger);
    threads ??= new GithubThreadsRest(auth, github.apiUrl, logger);
  }
  const prStore = new SessionPullRequestStore(db);
  const git = deps.git ?? runGit;
  const pullRequests = new SessionPullRequests({ config: github, api, store: prStore, git, clock, logger });
  const pageBase = () =>
    config.gateway.publicUrl ?? (config.gateway.port > 0 ? `http://127.0.0.1:${config.gateway.port}` : undefined);
  const secret = resolveWebhookSecret(github, env);
  let webhook: GithubIntegration['webhook'];
  let rework: GithubReviewLoop | undefined;
  if (secret) {
    const store = new GithubDeliveryStore(db);
    if (deps.sessions)
      rework = new GithubReviewLoop({
        config: github,
        workspaces: config.workspaces,
        api,
        threads,
        pullRequests,
        prStore,
        store: new GithubReworkStore(db),
        sessions: deps.sessions,
        git,
        clock,
        logger,
        pageBase,
      });
    const loop = rework;
    const handler = loop ? (event: GithubEvent) => loop.handle(event) : undefined;
    const worker = new GithubWebhookWorker({ store, clock, logger, ...(handler ? { handler } : {}) });
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
    ...(rework ? { rework } : {}),
    pageBase,
    start: async () => {
      await rework?.start();
      await webhook?.worker.start();
    },
    stop: async () => {
      await webhook?.worker.stop();
      await rework?.stop();
    },
  };
}
