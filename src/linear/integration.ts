import type { Kysely } from 'kysely';
import type { ApprovalDesk } from '../approvals/desk.ts';
// The Linear integration for the composition root: API access, the webhook intake and worker, the dispatch pipeline
// (guarded by the planner), the planner, triage, mention answers, the router and the chat notifier, built from config.
// The daemon (src/daemon/gateway.ts) registers the HTTP routes with gateway/linear-routes.ts using `routes` (linear/ may not import gateway/).
import type { Outbox } from '../channels/connector.ts';
import { CodeRunner } from '../coding/code-runner.ts';
import type { SessionManager } from '../coding/session-manager.ts';
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import { invalidInput } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { EngineApi } from '../engine/api.ts';
import type { Inference } from '../inference/types.ts';
import { LinearClaimStore } from '../store/linear-claims.ts';
import { LinearEffectStore } from '../store/linear-effects.ts';
import { LinearJobStore } from '../store/linear-jobs.ts';
import type { SessionLogs } from '../store/session-logs.ts';
import type { Database } from '../store/tables/index.ts';
import type { LinearAccess } from './api/access.ts';
import { buildLinearAccess } from './api/access.ts';
import { requireLinearSecrets } from './api/credentials.ts';
import type { LinearOAuth } from './api/oauth.ts';
import type { LinearApi } from './api/types.ts';
import { OutboxNotifier } from './chat-notifier.ts';
import { LinearEffects } from './effects.ts';
import { MentionResponder } from './mentions.ts';
import type { DispatchPullRequests } from './pipeline/deliver.ts';
import type { Pipeline } from './pipeline/pipeline.ts';
import { createPipeline } from './pipeline/pipeline.ts';
import type { DispatchPlacement } from './pipeline/placement.ts';
import type { OperationForwarder } from './pipeline/remote-sessions.ts';
import type { PipelineNotifier } from './pipeline/types.ts';
import { Planner } from './planner/planner.ts';
import { LinearRouter } from './router.ts';
import { Triage } from './triage.ts';
import type { LinearEventHandler } from './webhooks/events.ts';
import type { WebhookIntake } from './webhooks/intake.ts';
import type { LinearWebhooks } from './webhooks/service.ts';
import { appUserIdSource, buildLinearWebhooks } from './webhooks/service.ts';

export interface LinearIntegrationDeps {
  config: Config;
  env: NodeJS.ProcessEnv;
  /** The daemon's database (Linear migrations 400–499 applied by openDatabase). */
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  /** The coding sessions; `restore()` must run before `start()`. */
  sessions: SessionManager;
  logs: SessionLogs;
  /** Answers @mentions (askAgent); without it, mentions answered by the engine fail with a visible comment. */
  engine?: EngineApi;
  /** Triage and planner turns; without a provider, triage is skipped with a log line and planner turns say so. */
  inference?: Inference;
  /** Pipeline notifications to chat (stuck, done). */
  outbox?: Outbox;
  /** Replaces the Outbox notifier (tests). */
  notifier?: PipelineNotifier;
  /** The code_run backend shared with the operations; built here when absent. */
  codeRunner?: CodeRunner;
  /** The ApprovalDesk: workers' requests go to their Linear agent session as elicitations; replies there decide them. */
  approvals?: ApprovalDesk;
  /** GitHub's pull-request service (when `github.enabled`): passed dispatches end in a PR (`linear.pipeline.onPass`). */
  pullRequests?: DispatchPullRequests;
  /**
   * In a cluster (PostgreSQL): this node's placement of dispatches. The pipeline then runs on every node (the caller
   * starts and stops it, see `pipeline`), while `start()`/`stop()` serve only the intake (webhooks, router, planner).
   */
  placement?: DispatchPlacement;
  /** In a cluster: runs an operation on another node (prompts and approval replies for workers running there). */
  forwarder?: OperationForwarder;
}

/** What the Linear operations (linear_dispatches) read. */
export interface LinearServices {
  pipeline: Pick<Pipeline, 'list' | 'get'>;
  planner: Pick<Planner, 'store'>;
}

/** What gateway/linear-routes.ts `registerLinearRoutes(app, { ...routes, logger })` needs. */
export interface LinearRouteParts {
  intake: WebhookIntake;
  oauth: LinearOAuth;
  maxBodyBytes: number;
}

export interface LinearIntegration {
  access: LinearAccess;
  api: LinearApi;
  webhooks: LinearWebhooks;
  pipeline: Pipeline;
  planner: Planner;
  triage: Triage;
  mentions: MentionResponder;
  router: LinearRouter;
  /** The webhook worker's handler (the router). */
  handler: LinearEventHandler;
  notifier: PipelineNotifier;
  codeRunner: CodeRunner;
  /** For OperationServices.linear. */
  services: LinearServices;
  routes: LinearRouteParts;
  /** Starts the pipeline (recovering dispatches), the planner's recovery, the router's jobs and the webhook worker. */
  start(): Promise<void>;
  /** Stops taking deliveries, aborts running jobs (they run again at the next start) and stops the pipeline. */
  stop(): Promise<void>;
}

/**
 * Builds the Linear integration. Throws invalid_input when `linear.enabled` is false, and (requireLinearSecrets) when
 * no webhook signing secret is configured: the daemon never takes unsigned webhooks.
 */
export function createLinearIntegration(deps: LinearIntegrationDeps): LinearIntegration {
  const { config, env, db, clock, logger, sessions, logs } = deps;
  if (!config.linear.enabled)
    throw invalidInput('linear.enabled: the Linear integration is turned off', 'linear.enabled');
  const secrets = requireLinearSecrets(config.linear, env);
  // The typed query builder over the same connection, for the stores converted to it (claims, jobs, effects, deliveries).
  const access = buildLinearAccess({
    config: config.linear,
    gateway: config.gateway,
    env,
    db,
    clock,
    logger: logger.child({ component: 'linear-api' }),
  });
  const api = access.api;
  const planner = new Planner({
    api,
    db,
    ...(deps.inference ? { inference: deps.inference } : {}),
    config: config.linear.planner,
    clock,
    logger: logger.child({ component: 'planner' }),
  });
  const notifier =
    deps.notifier ?? new OutboxNotifier({ config, ...(deps.outbox ? { outbox: deps.outbox } : {}), logger });
  const pipeline = createPipeline({
    config,
    clock,
    logger: logger.child({ component: 'pipeline' }),
    db,
    sessions,
    logs,
    linear: api,
    notifier,
    guard: { isBlocked: (issue) => planner.isBlocked(issue) },
    ...(deps.approvals ? { approvals: deps.approvals } : {}),
    ...(deps.pullRequests ? { pullRequests: deps.pullRequests } : {}),
    ...(deps.placement ? { placement: deps.placement } : {}),
    ...(deps.forwarder ? { forwarder: deps.forwarder } : {}),
  });
  // In a cluster the pipeline runs on every node, started and stopped by its owner; here only on a node alone.
  const ownsPipeline = !deps.placement;
  const codeRunner = deps.codeRunner ?? new CodeRunner({ config, sessions, logs, clock, logger });
  const triage = new Triage({
    api,
    ...(deps.inference ? { inference: deps.inference } : {}),
    config: config.linear.triage,
    logger: logger.child({ component: 'triage' }),
  });
  const mentions = new MentionResponder({
    api,
    config,
    ...(deps.engine ? { engine: deps.engine } : {}),
    codeRunner,
    logger: logger.child({ component: 'mentions' }),
  });
  const router = new LinearRouter({
    config,
    api,
    pipeline,
    planner,
    triage,
    mentions,
    claims: new LinearClaimStore(db),
    jobStore: new LinearJobStore(db),
    effects: new LinearEffects(new LinearEffectStore(db), clock, logger.child({ component: 'linear-effects' })),
    approvals: pipeline.approvals,
    clock,
    logger: logger.child({ component: 'linear-router' }),
  });
  const webhooks = buildLinearWebhooks({
    config: config.linear,
    secret: secrets.webhookSecret,
    db,
    handler: router,
    appUserId: appUserIdSource(api, access.oauthStore, clock),
    clock,
    logger: logger.child({ component: 'linear-webhooks' }),
  });
  let started = false;
  return {
    access,
    api,
    webhooks,
    pipeline,
    planner,
    triage,
    mentions,
    router,
    handler: router,
    notifier,
    codeRunner,
    services: { pipeline, planner },
    routes: { intake: webhooks.intake, oauth: access.oauth, maxBodyBytes: config.linear.webhooks.maxBodyBytes },
    async start() {
      if (started) return;
      started = true;
      if (ownsPipeline) await pipeline.start();
      await planner.recover();
      await router.start();
      await webhooks.worker.start();
      logger.info(
        { apiUrl: config.linear.apiUrl, triage: triage.active, profiles: Object.keys(config.linear.profiles) },
        'linear integration started',
      );
    },
    async stop() {
      // Started again after a stop when this node serves `primary` again (it rejoined the cluster).
      started = false;
      await webhooks.worker.stop();
      await router.stop();
      if (ownsPipeline) await pipeline.stop();
    },
  };
}
