// Config section of the Linear integration: API access, OAuth, webhooks (config-linear-pipeline.ts: the pipeline;
// config-linear-agents.ts: agent profiles, router, triage, planner, code_run).
import { z } from 'zod';
import {
  agentProfileSchema,
  linearCodeRunSchema,
  linearMentionsSchema,
  linearPlannerSchema,
  linearRouterSchema,
  linearTriageSchema,
} from './config-linear-agents.ts';
import { linearPipelineSchema } from './config-linear-pipeline.ts';

const positiveMs = z.number().int().positive();

/** OAuth app settings (Linear "Applications"): install with `actor=app` so the app acts as its own agent user. */
export const linearOAuthSchema = z.strictObject({
  clientId: z.string().min(1).optional(),
  /** The client secret itself; prefer `clientSecretEnv`. */
  clientSecret: z.string().min(1).optional(),
  /** Name of the environment variable holding the client secret. */
  clientSecretEnv: z.string().min(1).default('LINEAR_CLIENT_SECRET'),
  /** Where Linear sends the browser back; default http://<gateway.host>:<gateway.port>/linear/oauth/callback. */
  redirectUri: z.url().optional(),
  authorizeUrl: z.url().default('https://linear.app/oauth/authorize'),
  tokenUrl: z.url().default('https://api.linear.app/oauth/token'),
  /** `app:assignable` lets issues be delegated to the app, `app:mentionable` lets people @mention it. */
  scopes: z.array(z.string().min(1)).min(1).default(['read', 'write', 'app:assignable', 'app:mentionable']),
  /** `app` installs the application as its own actor (required for agent sessions). */
  actor: z.enum(['app', 'user']).default('app'),
  /** An authorize `state` is accepted at the callback only this long after it was issued (10 min). */
  stateTtlMs: positiveMs.default(600_000),
  /** An access token is refreshed this long before it expires (seed: 60 s). */
  refreshBeforeExpiryMs: positiveMs.default(60_000),
  /** `switchboard linear connect` waits this long for the browser to come back (5 min). */
  connectTimeoutMs: positiveMs.default(300_000),
});

/** How signed webhook deliveries are taken in and worked off. */
export const linearWebhooksSchema = z.strictObject({
  /** Largest accepted webhook body (the plugin read at most 1 MB). */
  maxBodyBytes: z.number().int().positive().default(1_048_576),
  /** Handler attempts per delivery before it goes to the dead-letter state. */
  maxAttempts: z.number().int().positive().default(5),
  /** First retry delay of a failed delivery; doubles per attempt up to `retryMaxMs`. */
  retryInitialMs: positiveMs.default(5_000),
  retryMaxMs: positiveMs.default(300_000),
  /** Deliveries handled at once (never two of the same agent session or issue). */
  concurrency: z.number().int().positive().default(4),
  /** Finished delivery ids are kept this long to recognise redeliveries (7 days). */
  retentionMs: positiveMs.default(7 * 24 * 3_600_000),
  /** How often finished deliveries older than `retentionMs` are pruned (1 h). */
  pruneIntervalMs: positiveMs.default(3_600_000),
  /** On shutdown, handlers still running after this long are left behind; their deliveries run again at the next start. */
  stopGraceMs: positiveMs.default(10_000),
  /**
   * The worker gathers deliveries queued (and results finished) within this window into one turn: one transaction for
   * all of them, off the path of the intake's 200. 0: a turn at once for each.
   */
  batchMs: z.number().int().nonnegative().default(10),
});

/** Limits on calls to the Linear API, per workspace. */
export const linearRequestsSchema = z.strictObject({
  /** Requests per hour this daemon allows itself per workspace (Linear's limit is 5,000/h per user or app). */
  budgetPerHour: z.number().int().positive().default(5_000),
  /** A call waits at most this long for budget or a rate-limit reset before failing as `rate_limit` (2 min). */
  maxRateLimitWaitMs: positiveMs.default(120_000),
  /** Attempts per call for network errors, 5xx and rate limits (user and auth errors are never retried). */
  maxAttempts: z.number().int().positive().default(5),
  /** First backoff delay; doubles per attempt up to `backoffMaxMs`. */
  backoffInitialMs: positiveMs.default(1_000),
  backoffMaxMs: positiveMs.default(30_000),
  /** One HTTP request to Linear is abandoned after this long. */
  timeoutMs: positiveMs.default(30_000),
});

export const linearSchema = z.strictObject({
  enabled: z.boolean().default(false),
  /** GraphQL endpoint; http is accepted only for localhost / 127.0.0.1 (tests). */
  apiUrl: z.url().default('https://api.linear.app/graphql'),
  /** A personal API key (sent without "Bearer"); first in the token order. Prefer `apiKeyEnv`. */
  apiKey: z.string().min(1).optional(),
  /** Name of an environment variable holding a personal API key; counts as the config token. */
  apiKeyEnv: z.string().min(1).optional(),
  /** Webhook signing secret; Linear refuses to start when enabled without one. Prefer `webhookSecretEnv`. */
  webhookSecret: z.string().min(1).optional(),
  /** Name of the environment variable holding the webhook signing secret. */
  webhookSecretEnv: z.string().min(1).default('LINEAR_WEBHOOK_SECRET'),
  oauth: linearOAuthSchema.prefault({}),
  webhooks: linearWebhooksSchema.prefault({}),
  requests: linearRequestsSchema.prefault({}),
  pipeline: linearPipelineSchema.prefault({}),
  /** Named agents (@mention aliases, instructions, backend); see config-linear-agents.ts. */
  profiles: z
    .record(
      z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'a profile name: letters, digits, ".", "_" or "-"'),
      agentProfileSchema,
    )
    .default({}),
  mentions: linearMentionsSchema.prefault({}),
  router: linearRouterSchema.prefault({}),
  triage: linearTriageSchema.prefault({}),
  planner: linearPlannerSchema.prefault({}),
  codeRun: linearCodeRunSchema.prefault({}),
});

export type LinearConfig = z.infer<typeof linearSchema>;
