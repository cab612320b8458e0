// code_run: one coding-agent turn, waited for, with the watchdog; answers { success, output, error? } where error is
// `timeout`, `inactivity_timeout` or `exit N` (the seed's kinds). Backend: explicit > the calling agent's profile >
// linear.codeRun.harness > defaultHarness. In a cluster on PostgreSQL the turn is placed like any launch (workspaces,
// harness, free slots; queued when every node is full) and waited for wherever it runs; an aborted call kills it there.
import { z } from 'zod';
import type { CodeRunCluster, CodeRunResult } from '../coding/code-runner.ts';
import { HARNESS_NAMES } from '../core/config.ts';
import { AppError } from '../core/errors.ts';
import { modelParam, workdirParam } from './common.ts';
import { killOperation } from './kill.ts';
import type { OperationContext } from './operation.ts';
import { callerChannel, defineOperation } from './operation.ts';
import { resolveOriginChannel } from './origin.ts';

const input = z.strictObject({
  prompt: z.string().trim().min(1, 'the prompt must not be empty').describe('the task for the coding agent'),
  harness: z
    .enum(HARNESS_NAMES)
    .optional()
    .describe('claude, codex or gemini (default: your profile, then linear.codeRun.harness, then defaultHarness)'),
  workdir: workdirParam.optional(),
  model: modelParam.optional(),
  timeoutSec: z
    .number()
    .positive()
    .max(86_400)
    .optional()
    .describe('wall-clock limit in seconds (default linear.codeRun.timeoutSec)'),
});

/** The agent profile of a calling engine session: a subagent started with `agent: <profile>` carries its name. */
export function callerProfile(ctx: OperationContext): string | undefined {
  const { caller, services } = ctx;
  if (caller.kind !== 'agent' || !services.engine) return undefined;
  const session = services.engine.listSessions().find((s) => s.id === caller.sessionId);
  const name = session?.descriptor.type === 'subagent' ? session.descriptor.name : undefined;
  return name && Object.hasOwn(services.config.linear.profiles, name) ? name : undefined;
}

/**
 * The cluster's launch path for a code_run turn (undefined on SQLite: it runs here): `ClusterSessions.launch` with no
 * placement constraint beyond the launch itself, and a kill that goes where the kill operation goes (the node running
 * it, or the queue); a session already ended is left as it is.
 */
export function codeRunCluster(ctx: OperationContext): CodeRunCluster | undefined {
  const { clusterSessions } = ctx.services;
  if (!clusterSessions) return undefined;
  return {
    launch: async (request) => (await clusterSessions.launch(request, {})).record,
    kill: async (id) => {
      try {
        await killOperation.run(ctx, { session: id });
      } catch (error) {
        if (error instanceof AppError && error.kind === 'conflict') return;
        throw error;
      }
    },
  };
}

/** Runs one coding turn and waits for it. */
export const codeRunOperation = defineOperation({
  name: 'code-run',
  summary:
    'Run one coding-agent turn (Claude Code, Codex or Gemini) and wait for it; returns {success, output, error?}',
  input,
  needs: ['codeRunner'],
  expose: {
    tool: 'code_run',
    rpc: 'code.run',
    cli: { name: 'code-run', args: ['<prompt...>'] },
  },
  async run(ctx, args): Promise<CodeRunResult> {
    const { config, codeRunner: runner } = ctx.services;
    const workdir = args.workdir ?? config.linear.codeRun.workdir ?? config.defaultWorkdir;
    const profile = callerProfile(ctx);
    const channel = callerChannel(ctx.caller);
    return runner.run(
      {
        prompt: args.prompt,
        ...(args.harness ? { harness: args.harness } : {}),
        ...(workdir ? { workdir } : {}),
        ...(args.model ? { model: args.model } : {}),
        ...(args.timeoutSec ? { timeoutSec: args.timeoutSec } : {}),
        ...(profile ? { profile } : {}),
        originChannel: resolveOriginChannel(config, {
          ...(channel ? { callerChannel: channel } : {}),
          workdir: workdir ?? process.cwd(),
        }),
        originSessionId: ctx.caller.kind === 'agent' ? ctx.caller.sessionId : null,
      },
      ctx.signal,
      codeRunCluster(ctx),
    );
  },
  format(r) {
    return JSON.stringify(
      {
        success: r.success,
        output: r.output,
        ...(r.error ? { error: r.error } : {}),
        ...(r.detail ? { detail: r.detail } : {}),
        session: r.sessionId,
        harness: r.harness,
      },
      null,
      2,
    );
  },
});
