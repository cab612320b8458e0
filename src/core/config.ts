import { z } from 'zod';
import { approvalsSchema } from './config-approvals.ts';
import { channelsSchema } from './config-channels.ts';
import { clusterSchema, nodeSchema, storeSchema } from './config-cluster.ts';
import { engineSchema, heartbeatSchema, hooksSchema, schedulerSchema, wakeSchema } from './config-engine.ts';
import { githubSchema } from './config-github.ts';
import { inferenceSchema } from './config-inference.ts';
import { linearSchema } from './config-linear.ts';

/** Names of the coding-agent backends. */
export const HARNESS_NAMES = ['claude', 'codex', 'gemini'] as const;
export type HarnessName = (typeof HARNESS_NAMES)[number];

/** Claude Code permission modes accepted by the SDK. */
export const PERMISSION_MODES = ['default', 'plan', 'acceptEdits', 'bypassPermissions', 'dontAsk', 'auto'] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

const envMap = z.record(z.string(), z.string());
const positiveMs = z.number().int().positive();

const timingsSchema = z.strictObject({
  /** Foreground text streaming is debounced this long per channel and session (seed: 500 ms). */
  fgDebounceMs: positiveMs.default(500),
  /** Waiting-for-input safety net: silence this long (no tool running) counts as waiting (seed: 15 s). */
  safetyNetMs: positiveMs.default(15_000),
  /** Wake events for a waiting session are debounced this long per session (seed: 5 s). */
  waitingEventDebounceMs: positiveMs.default(5_000),
  /** A session running longer than this without a foreground channel gets one reminder (seed: 10 min). */
  longRunReminderMs: positiveMs.default(600_000),
  /** How often the long-run reminder check runs (seed: 60 s). */
  reminderCheckIntervalMs: positiveMs.default(60_000),
  /** Garbage collection of finished sessions runs this often (seed: 5 min). */
  cleanupIntervalMs: positiveMs.default(300_000),
  /** Finished sessions leave memory after this long (seed: 1 h); they stay in the store. */
  cleanupMaxAgeMs: positiveMs.default(3_600_000),
  /** Grace period between SIGTERM and SIGKILL when stopping an agent process. */
  killGraceMs: positiveMs.default(5_000),
  /** Extra wait before a group commit; appends that arrive while an fdatasync runs share the next one either way. */
  fsyncBatchMs: z.number().int().min(0).default(0),
});

const claudeSchema = z.strictObject({
  /** Path of the Claude Code executable; default: the binary bundled with @anthropic-ai/claude-agent-sdk. */
  executable: z.string().optional(),
  /** Filesystem settings Claude Code loads; 'project' is what loads CLAUDE.md. */
  settingSources: z.array(z.enum(['user', 'project', 'local'])).default(['user', 'project', 'local']),
  /** Extra environment for the agent process, merged over the daemon's environment. */
  env: envMap.default({}),
  /** Tools auto-allowed without prompting when a launch names none. */
  allowedTools: z.array(z.string()).optional(),
});

const codexProviderSchema = z.strictObject({
  /** Provider id used in `-c model_provider=<id>`. */
  id: z.string().regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, _ and - only'),
  name: z.string().optional(),
  baseUrl: z.url(),
  /** Name of the environment variable that holds the API key. */
  envKey: z.string().optional(),
  wireApi: z.literal('responses').default('responses'),
});

const codexSchema = z.strictObject({
  /** Path of the codex executable; default: the one installed with @openai/codex, else `codex` on PATH. */
  executable: z.string().optional(),
  env: envMap.default({}),
  /** A model provider given to codex with `-c` overrides (OPENAI_BASE_URL is ignored by codex). */
  provider: codexProviderSchema.optional(),
  /** Further `-c key=value` overrides passed to every codex run. */
  config: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).default({}),
  sandbox: z.enum(['read-only', 'workspace-write', 'danger-full-access']).optional(),
});

const geminiSchema = z.strictObject({
  /** Path of the gemini executable; default: the one installed with @google/gemini-cli, else `gemini` on PATH. */
  executable: z.string().optional(),
  env: envMap.default({}),
  /** Headless runs only get write and shell tools with `yolo` (or policy files). */
  approvalMode: z.enum(['default', 'auto_edit', 'yolo']).default('yolo'),
});

/** The whole configuration; every timer, limit and default the seeds name is a key here with the seed's default. */
export const configSchema = z.strictObject({
  gateway: z
    .strictObject({
      host: z.string().default('127.0.0.1'),
      port: z.number().int().min(0).max(65_535).default(18_789),
      /** Binding beyond loopback must be asked for explicitly. */
      allowRemote: z.boolean().default(false),
      /**
       * Where people reach the web page (e.g. through a tunnel), for links the daemon hands out — the Linear agent
       * session's link to its coding session. Default: http://127.0.0.1:<port>.
       */
      publicUrl: z.url().optional(),
      /** Most calls one JSON-RPC batch may hold; a longer batch gets one -32600 error naming the limit. */
      maxBatch: z.number().int().positive().default(100),
      /** Most bytes one /rpc response may carry; results beyond it are refused with a -32005 error, never built. */
      maxResponseBytes: z
        .number()
        .int()
        .positive()
        .default(8 * 1_048_576),
      /** Seconds a whole request (headers and body) may take to arrive before its connection is closed. */
      requestTimeoutSec: z.number().positive().default(30),
      /** Seconds the headers, and then the body, may each take to arrive (and an idle connection may stay open). */
      bodyTimeoutSec: z.number().positive().default(10),
    })
    .prefault({}),
  /** Roots outside which no session may run; empty means the user's home directory. */
  workspaces: z.array(z.string().min(1)).default([]),
  defaultHarness: z.enum(HARNESS_NAMES).default('claude'),
  maxSessions: z.number().int().positive().default(5),
  maxPersistedSessions: z.number().int().positive().default(50),
  idleTimeoutMinutes: z.number().positive().default(30),
  defaultBudgetUsd: z.number().positive().default(5),
  permissionMode: z.enum(PERMISSION_MODES).default('bypassPermissions'),
  defaultModel: z.string().min(1).optional(),
  defaultWorkdir: z.string().min(1).optional(),
  /** Working-directory prefix → channel string (`channel|target` or `channel|account|target`); longest prefix wins. */
  agentChannels: z.record(z.string(), z.string()).default({}),
  fallbackChannel: z.string().min(1).optional(),
  maxAutoResponds: z.number().int().positive().default(10),
  timings: timingsSchema.prefault({}),
  harnesses: z
    .strictObject({
      claude: claudeSchema.prefault({}),
      codex: codexSchema.prefault({}),
      gemini: geminiSchema.prefault({}),
    })
    .prefault({}),
  engine: engineSchema.prefault({}),
  scheduler: schedulerSchema.prefault({}),
  heartbeat: heartbeatSchema.prefault({}),
  hooks: hooksSchema.prefault({}),
  wake: wakeSchema.prefault({}),
  inference: inferenceSchema.prefault({}),
  channels: channelsSchema.prefault({}),
  approvals: approvalsSchema.prefault({}),
  linear: linearSchema.prefault({}),
  github: githubSchema.prefault({}),
  /** The database: SQLite in the home (default) or a PostgreSQL every node of a cluster shares. */
  store: storeSchema.prefault({}),
  /** This daemon as a node of the cluster (name, labels). */
  node: nodeSchema.prefault({}),
  cluster: clusterSchema.prefault({}),
  log: z
    .strictObject({
      level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    })
    .prefault({}),
});

export type Config = z.infer<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;
