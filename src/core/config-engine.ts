// Config sections of the agent engine: the orchestrator's loop, cron scheduling, the heartbeat and the wake hook.
// Owned by the engine; every timer and limit the engine seed names is a key here with the seed's default.
import { z } from 'zod';

/** The agent loop of engine sessions (orchestrator, cron, heartbeat and subagent sessions). */
export const engineSchema = z.strictObject({
  /** Model/tool round trips per turn before the turn ends with "Tool execution limit reached." */
  maxToolIterations: z.number().int().positive().default(10),
  /** Appended to the built-in orchestrator system prompt. */
  systemPrompt: z.string().optional(),
  /** History sent to the model: at most this many earlier turns (whole turns, so tool calls keep their results). */
  historyTurns: z.number().int().min(0).default(20),
  /** …and at most about this many characters of them (the oldest turns drop first; the newest always stays). */
  historyMaxChars: z.number().int().positive().default(100_000),
  /** askAgent gives up waiting for the subagent's first reply after this long (the subagent keeps running). */
  askTimeoutMs: z.number().int().positive().default(300_000),
  /** On stop, running turns get this long to finish; then they are cut off (restore closes them on next start). */
  stopGraceMs: z.number().int().min(0).default(10_000),
  /** How often accepted message ids and session state go to the SQLite index (the logs stay the truth). */
  indexFlushMs: z.number().int().positive().default(1_000),
  /** Most engine session log files held open at once. */
  maxOpenLogs: z.number().int().positive().default(256),
});

/** Cron tasks: each has its own cron session; runs missed while the daemon was down are skipped or run once. */
export const schedulerSchema = z.strictObject({
  /**
   * What to do with runs that fell due while the daemon was down: `skip` records them as missed and waits for the
   * next due time; `run-once` makes one catch-up run however many were missed, then keeps the normal cadence.
   */
  missedRuns: z.enum(['skip', 'run-once']).default('run-once'),
  /** IANA time zone for tasks that name none (e.g. "Europe/Paris"); default: the machine's local time. */
  timezone: z
    .string()
    .min(1)
    .refine((tz) => isTimeZone(tz), 'not an IANA time zone (e.g. "Europe/Paris", "UTC")')
    .optional(),
  /** Longest single timer wait; the next due time is recomputed at least this often, so clock changes are tolerated. */
  maxWaitMs: z.number().int().positive().default(60_000),
  /** Run records kept per cron task (and heartbeat runs kept); older ones are deleted. */
  keepRuns: z.number().int().positive().default(200),
});

/** The heartbeat session: the heartbeat task list sent as one batch prompt on an interval. */
export const heartbeatSchema = z.strictObject({
  /** Minutes between heartbeat runs (seed: 30); 0 turns the timer off (explicit wakes still run). */
  intervalMinutes: z.number().min(0).default(30),
});

/** `POST /hooks/*`: needs its own token (`hooks.token` in the state directory), never the gateway's. */
export const hooksSchema = z.strictObject({
  enabled: z.boolean().default(true),
  /** Longest `text` accepted by POST /hooks/wake. */
  maxTextChars: z.number().int().positive().default(20_000),
});

/** Wake events from coding sessions to the orchestrator (stored first, then delivered; see engine/wake). */
export const wakeSchema = z.strictObject({
  /** A delivery that failed (the engine was stopping or could not write) is tried again after this long. */
  retryMs: z.number().int().positive().default(30_000),
  /** Settled wake events kept for inspection; older ones are deleted. */
  keepEvents: z.number().int().positive().default(1_000),
});

/** True when `tz` is a time zone name this runtime knows. */
export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
