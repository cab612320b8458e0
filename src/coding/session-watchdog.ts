// The watchdog of one coding session (a pipeline worker or auditor, a code_run turn): inactivity, total time and tool-call
// time limits.
//
// Activity is anything the session's agent does: text, a tool call, a tool result, a question, a turn end… (the
// pipeline feeds every record of the session's log that comes from the agent). While a tool call runs, the silence
// limit is the tool timeout instead of the inactivity limit (a test suite may print nothing for minutes), and a tool
// call running past the tool timeout trips the watchdog even if other output arrives meanwhile. The total limit counts
// from `start()`. One timer, rescheduled to the nearest deadline; time comes from the injected Clock.
import type { Clock, Timer } from '../core/clock.ts';
import type { AgentProfile, LinearPipelineConfig } from '../core/config-linear-pipeline.ts';
import type { LogRecord } from '../store/jsonl-log.ts';

/** Limits in milliseconds. */
export interface WatchdogLimits {
  inactivityMs: number;
  maxTotalMs: number;
  toolTimeoutMs: number;
}

/** The seed's defaults, in seconds: 120 s of silence, 7,200 s in total, 600 s per tool call. */
export const DEFAULT_WATCHDOG_SECONDS = { inactivitySec: 120, maxTotalSec: 7_200, toolTimeoutSec: 600 } as const;

type WatchdogSeconds = Partial<Record<keyof typeof DEFAULT_WATCHDOG_SECONDS, number>>;

/**
 * Resolves the limits of a dispatch: each key from the agent profile's `watchdog`, else the pipeline config's
 * `watchdog`, else the defaults. Config values are seconds; the result is milliseconds.
 */
export function resolveWatchdogLimits(
  profile: Pick<AgentProfile, 'watchdog'> | undefined,
  config: WatchdogSeconds | LinearPipelineConfig['watchdog'] | undefined,
): WatchdogLimits {
  const pick = (key: keyof typeof DEFAULT_WATCHDOG_SECONDS): number =>
    Math.round((profile?.watchdog?.[key] ?? config?.[key] ?? DEFAULT_WATCHDOG_SECONDS[key]) * 1000);
  return {
    inactivityMs: pick('inactivitySec'),
    maxTotalMs: pick('maxTotalSec'),
    toolTimeoutMs: pick('toolTimeoutSec'),
  };
}

/** Why the watchdog tripped. */
export type WatchdogTrip =
  | { kind: 'inactivity'; limitMs: number; silentMs: number }
  | { kind: 'total'; limitMs: number; runningMs: number }
  | { kind: 'tool'; limitMs: number; runningMs: number; tool: string };

/** A short human sentence for a trip: "no activity for 120 s". */
export function describeTrip(trip: WatchdogTrip): string {
  const s = (ms: number): string => `${Math.round(ms / 100) / 10} s`;
  switch (trip.kind) {
    case 'inactivity':
      return `no activity for ${s(trip.silentMs)} (limit ${s(trip.limitMs)})`;
    case 'total':
      return `running for ${s(trip.runningMs)} in total (limit ${s(trip.limitMs)})`;
    case 'tool':
      return `tool call ${trip.tool} running for ${s(trip.runningMs)} (limit ${s(trip.limitMs)})`;
  }
}

/** What the session did, as the watchdog needs it. */
export type WatchdogEvent =
  | { kind: 'activity' }
  | { kind: 'toolStart'; id: string; name: string }
  | { kind: 'toolEnd'; id: string }
  /** A turn ended: every tool call of it is over. */
  | { kind: 'turnEnd' }
  /** The agent waits for a person to decide an approval: silence and tool time do not count until it is decided. */
  | { kind: 'waitStart' }
  | { kind: 'waitEnd' };

export interface SessionWatchdogOptions {
  clock: Clock;
  limits: WatchdogLimits;
  /** Called once, when a limit is passed; the caller kills the session. */
  onTrip: (trip: WatchdogTrip) => void;
}

/** Watches one session; `start`, feed it `observe`, `stop` when the session ends. */
export class SessionWatchdog {
  #options: SessionWatchdogOptions;
  #timer: Timer | null = null;
  #startedAt = 0;
  #lastActivityAt = 0;
  #tools = new Map<string, { name: string; since: number }>();
  #running = false;
  #tripped: WatchdogTrip | null = null;
  /** When the agent began waiting for a person (an approval), or null while it works. */
  #waitingSince: number | null = null;

  constructor(options: SessionWatchdogOptions) {
    this.#options = options;
  }

  /** The trip that fired, if any. */
  get tripped(): WatchdogTrip | null {
    return this.#tripped;
  }

  /** Starts watching (idempotent); the clocks start now. */
  start(): void {
    if (this.#running || this.#tripped) return;
    this.#running = true;
    this.#startedAt = this.#options.clock.now();
    this.#lastActivityAt = this.#startedAt;
    this.#schedule();
  }

  /** Records what the session did. */
  observe(event: WatchdogEvent): void {
    if (!this.#running) return;
    const now = this.#options.clock.now();
    this.#lastActivityAt = now;
    switch (event.kind) {
      case 'toolStart':
        this.#tools.set(event.id, { name: event.name, since: now });
        return;
      case 'toolEnd':
        this.#tools.delete(event.id);
        return;
      case 'turnEnd':
        this.#tools.clear();
        return;
      case 'waitStart':
        this.#waitingSince ??= now;
        this.#schedule();
        return;
      case 'waitEnd':
        this.#endWait(now);
        return;
      case 'activity':
        return;
      default:
        event satisfies never;
    }
  }

  /** A person decided: the tool calls' clocks move on by the time waited, as if it had not passed. */
  #endWait(now: number): void {
    if (this.#waitingSince === null) return;
    const waited = now - this.#waitingSince;
    this.#waitingSince = null;
    for (const tool of this.#tools.values()) tool.since += waited;
    this.#schedule();
  }

  /** Stops watching (idempotent). */
  stop(): void {
    this.#running = false;
    this.#timer?.cancel();
    this.#timer = null;
  }

  #oldestTool(): { name: string; since: number } | undefined {
    let oldest: { name: string; since: number } | undefined;
    for (const tool of this.#tools.values()) if (!oldest || tool.since < oldest.since) oldest = tool;
    return oldest;
  }

  /** The next deadline and the trip it would be. */
  #next(): { at: number; trip: (now: number) => WatchdogTrip } {
    const { limits } = this.#options;
    const total = {
      at: this.#startedAt + limits.maxTotalMs,
      trip: (now: number): WatchdogTrip => ({
        kind: 'total',
        limitMs: limits.maxTotalMs,
        runningMs: now - this.#startedAt,
      }),
    };
    // While a person decides an approval only the total limit runs.
    if (this.#waitingSince !== null) return total;
    const tool = this.#oldestTool();
    const quiet = tool
      ? {
          at: tool.since + limits.toolTimeoutMs,
          trip: (now: number): WatchdogTrip => ({
            kind: 'tool',
            limitMs: limits.toolTimeoutMs,
            runningMs: now - tool.since,
            tool: tool.name,
          }),
        }
      : {
          at: this.#lastActivityAt + limits.inactivityMs,
          trip: (now: number): WatchdogTrip => ({
            kind: 'inactivity',
            limitMs: limits.inactivityMs,
            silentMs: now - this.#lastActivityAt,
          }),
        };
    return quiet.at <= total.at ? quiet : total;
  }

  #schedule(): void {
    this.#timer?.cancel();
    const { clock } = this.#options;
    const next = this.#next();
    this.#timer = clock.after(Math.max(1, next.at - clock.now()), () => this.#check());
  }

  #check(): void {
    this.#timer = null;
    if (!this.#running) return;
    const now = this.#options.clock.now();
    const next = this.#next();
    if (now < next.at) {
      this.#schedule();
      return;
    }
    this.#tripped = next.trip(now);
    this.stop();
    this.#options.onTrip(this.#tripped);
  }
}

/** Maps a session log record to what the watchdog counts; null for records that are not the agent's doing. */
export function watchdogEventOf(record: LogRecord): WatchdogEvent | null {
  switch (record.type) {
    case 'tool':
      return { kind: 'toolStart', id: String(record.id), name: String(record.name) };
    case 'toolResult':
      return { kind: 'toolEnd', id: String(record.id) };
    case 'turn':
      return { kind: 'turnEnd' };
    case 'approval': {
      const status = (record.approval as { status?: unknown } | undefined)?.status;
      return status === 'pending' ? { kind: 'waitStart' } : { kind: 'waitEnd' };
    }
    case 'permissionAnswer':
      return { kind: 'waitEnd' };
    case 'output':
    case 'question':
    case 'permission':
    case 'backend':
    case 'warning':
      return { kind: 'activity' };
    default:
      return null;
  }
}
