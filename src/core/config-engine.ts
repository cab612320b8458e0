// Config sections of the agent engine: the orchestrator's loop, cron scheduling, the heartbeat and the wake hook.
// Owned by the engine; every timer and limit the engine seed names is a key here with the seed's default.
import { z } from 'zod';

/** The agent loop of engine sessions (orchestrator, cron, heartbeat and subagent sessions). */
export const engineSchema = z.strictObject({
  /** Model/tool round trips per turn before the turn ends with "Tool execution limit reached." */
  maxToolIterations: z.number().int().positive().default(10),
  /** Appended to the built-in orchestrator system prompt. */
  systemPrompt: z.string().optional(),
});

/** Cron tasks: each has its own cron session; runs missed while the daemon was down are skipped or run once. */
export const schedulerSchema = z.strictObject({
  /** What to do with runs that fell due while the daemon was down. */
  missedRuns: z.enum(['skip', 'run-once']).default('run-once'),
});

/** The heartbeat session: the heartbeat task list sent as one batch prompt on an interval. */
export const heartbeatSchema = z.strictObject({
  /** Minutes between heartbeat runs (seed: 30); 0 turns the timer off (explicit wakes still run). */
  intervalMinutes: z.number().min(0).default(30),
});

/** `POST /hooks/*`: needs its own token (`hooks.token` in the state directory), never the gateway's. */
export const hooksSchema = z.strictObject({
  enabled: z.boolean().default(true),
});
