import type { Transaction } from 'kysely';
import { z } from 'zod';
import type { LaunchRequest } from '../coding/session-manager.ts';
import type { Config } from '../core/config.ts';
import { HARNESS_NAMES, PERMISSION_MODES } from '../core/config.ts';
import { AppError, invalidInput } from '../core/errors.ts';
import type { Placement, StoredSession } from '../store/coding-session-types.ts';
import type { Database } from '../store/tables/index.ts';
import { modelParam, sessionRef, summaryOf, workdirParam } from './common.ts';
import { truncate } from './format.ts';
import { legacyLaunch } from './legacy-rpc.ts';
import type { OperationContext } from './operation.ts';
import { callerChannel, commandChannel, defineOperation } from './operation.ts';
import { resolveOriginChannel } from './origin.ts';
import type { SessionSummary } from './session-summary.ts';

/** On one daemon (SQLite) a launch runs here: `on` another node or a label this node lacks cannot be met. */
function refuseElsewhere(config: Config, placement: Placement): void {
  if (placement.on !== undefined && placement.on !== config.node.name)
    throw invalidInput(`on: no node named "${placement.on}" (this daemon is node ${config.node.name}, alone)`, 'on');
  const missing = (placement.labels ?? []).filter((l) => !config.node.labels.includes(l));
  if (missing.length > 0)
    throw invalidInput(`labels: node ${config.node.name} lacks the labels ${missing.join(', ')}`, 'labels');
}

/**
 * The workdir of the stored session a launch resumes (the agent keeps a conversation per working directory: Claude Code
 * finds it only from the same one); undefined for an agent session id switchboard never stored.
 */
async function resumedWorkdir(ctx: OperationContext, ref: string): Promise<string | undefined> {
  try {
    return (await ctx.services.sessions.get(ref)).workdir;
  } catch (error) {
    if (error instanceof AppError && error.kind === 'not_found') return undefined;
    throw error;
  }
}

const input = z.strictObject({
  prompt: z.string().trim().min(1, 'the prompt must not be empty'),
  harness: z.enum(HARNESS_NAMES).optional().describe('coding agent: claude, codex or gemini (default from config)'),
  name: z.string().trim().min(1).optional().describe('session name (default: derived from the prompt)'),
  workdir: workdirParam.optional(),
  model: modelParam.optional(),
  maxBudgetUsd: z.number().positive().optional().describe('spending cap in USD (default from config)'),
  systemPrompt: z.string().optional().describe("appended to the agent's own system prompt"),
  allowedTools: z
    .array(z.string().min(1))
    .optional()
    .describe('tools the agent may use without asking, e.g. Read or Bash(git *) (CLI: comma-separated or repeated)'),
  resumeSessionId: sessionRef
    .optional()
    .describe('continue an earlier session: its id, name, or agent session id (in its workdir, unless one is given)'),
  forkSession: z.boolean().optional().describe('with resumeSessionId: continue in a new agent session'),
  multiTurnDisabled: z.boolean().optional().describe('end the session after its first turn'),
  permissionMode: z
    .enum(PERMISSION_MODES)
    .optional()
    .describe(`how the agent asks before acting: ${PERMISSION_MODES.join(', ')} (default from the config)`),
  on: z.string().trim().min(1).optional().describe('run on this node of the cluster (by name)'),
  labels: z
    .array(z.string().trim().min(1))
    .optional()
    .describe('run on a node with every one of these labels (CLI: --label gpu, repeatable)'),
  channel: z
    .string()
    .trim()
    .min(1)
    .optional()
    .describe('where notifications go: channel|target or channel|account|target'),
});

/** Starts a coding session. */
export const launchOperation = defineOperation({
  name: 'launch',
  summary: 'Launch a coding-agent session (Claude Code, Codex or Gemini) in the background',
  input,
  aliases: { originChannel: 'channel' },
  expose: {
    tool: 'claude_launch',
    command: {
      name: 'claude',
      positional: ['prompt'],
      usage: '/claude [--name <name>] [--harness claude|codex|gemini] [--workdir <dir>] <prompt>',
    },
    rpc: 'sessions.launch',
    legacyRpc: legacyLaunch,
    cli: { name: 'launch', args: ['<prompt...>'], hide: ['channel'], flags: { labels: 'label' } },
  },
  // With an idempotency key, the launched session's summary is committed as the answer together with its row.
  idempotent: true,
  async run(ctx, args): Promise<SessionSummary> {
    const { sessions, config, clusterSessions } = ctx.services;
    const workdir =
      args.workdir ??
      (args.resumeSessionId ? await resumedWorkdir(ctx, args.resumeSessionId) : undefined) ??
      config.defaultWorkdir;
    const keyed = ctx.idempotency;
    const stored = keyed
      ? { onStored: (record: StoredSession, trx: Transaction<Database>) => keyed.commitIn(trx, summaryOf(ctx, record)) }
      : {};
    const placement = { ...(args.on ? { on: args.on } : {}), ...(args.labels?.length ? { labels: args.labels } : {}) };
    const request: LaunchRequest = {
      prompt: args.prompt,
      ...(args.harness ? { harness: args.harness } : {}),
      ...(args.name ? { name: args.name } : {}),
      ...(workdir ? { workdir } : {}),
      ...(args.model ? { model: args.model } : {}),
      ...(args.maxBudgetUsd ? { maxBudgetUsd: args.maxBudgetUsd } : {}),
      ...(args.systemPrompt ? { systemPrompt: args.systemPrompt } : {}),
      ...(args.allowedTools ? { allowedTools: args.allowedTools } : {}),
      ...(args.resumeSessionId
        ? { resumeSessionRef: args.resumeSessionId, forkSession: args.forkSession ?? false }
        : {}),
      ...(args.permissionMode ? { permissionMode: args.permissionMode } : {}),
      multiTurn: !args.multiTurnDisabled,
      originChannel: resolveOriginChannel(config, {
        ...(args.channel ? { explicit: args.channel } : {}),
        ...(callerChannel(ctx.caller) ? { callerChannel: callerChannel(ctx.caller) } : {}),
        workdir: workdir ?? process.cwd(),
      }),
      originSessionId: ctx.caller.kind === 'agent' ? ctx.caller.sessionId : null,
      ...commandChannel(ctx.caller),
    };
    if (clusterSessions) {
      // A cluster on PostgreSQL: placed on a node that can run it, now or when a slot frees (see LaunchQueue).
      const placed = await clusterSessions.launch(request, placement, stored);
      const summary = summaryOf(ctx, placed.session?.record ?? placed.record);
      return placed.position === null ? summary : { ...summary, queuePosition: placed.position };
    }
    refuseElsewhere(config, placement);
    const session = await sessions.launchSoon(request, stored);
    return summaryOf(ctx, session.record);
  },
  follow(s) {
    return { kind: 'session', session: s, from: s.runStartSeq ?? 1 };
  },
  format(s) {
    if (s.status === 'queued')
      return [
        `⏳ [${s.name}] Queued${s.queuePosition ? ` (position ${s.queuePosition})` : ''}: it starts on a node with a free slot`,
        `   ID: ${s.id}`,
        `   📁 ${s.workdir}`,
        `   📝 "${truncate(s.prompt, 80)}"`,
      ].join('\n');
    return [
      `↩️ [${s.name}] Launched (${s.harness})`,
      `   Name: ${s.name}`,
      `   ID: ${s.id}`,
      ...(s.node ? [`   Node: ${s.node}`] : []),
      `   📁 ${s.workdir}`,
      `   Model: ${s.model ?? 'agent default'}`,
      `   Mode: ${s.multiTurn ? 'multi-turn' : 'single turn'}`,
      `   📝 "${truncate(s.prompt, 80)}"`,
    ].join('\n');
  },
});
