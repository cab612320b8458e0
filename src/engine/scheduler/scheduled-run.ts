// What the cron scheduler and the heartbeat share: their dependencies, their one timer, and the durable way a run is
// posted — its intent is in the store before the post, the outcome is recorded after, and a run a crash left unrecorded
// is posted again on the next start under the same message id (the engine acknowledges a repeat as a duplicate).
import type { Clock, Timer } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import type { Accepted, EngineApi } from '../api.ts';

/** What every scheduler runs on: the engine it posts to, the clock, the logger. */
export interface SchedulerBaseDeps {
  engine: Pick<EngineApi, 'postScheduled'>;
  clock: Clock;
  logger: Logger;
}

/** A crashed post is tried this many times in all; a further start finds it abandoned instead of looping. */
export const MAX_POST_ATTEMPTS = 2;

/** The error recorded on a run abandoned after `attempts` starts that found it unrecorded. */
export function abandonedError(attempts: number): string {
  return `the daemon stopped ${attempts} times while posting this run; not posted again (to avoid a restart loop)`;
}

/** Where a scheduled run goes and what it says: the engine session, the origin label, the prompt under its message id. */
export interface ScheduledPost {
  target: { type: 'cron'; id: string } | { type: 'heartbeat' };
  origin: string;
  prompt: string;
  messageId: string;
}

/** How a scheduler records the outcome of one post; `refused` may rethrow the engine's error to the caller. */
export interface PostRecorder<R> {
  accepted(accepted: Accepted): R | Promise<R>;
  refused(error: unknown): R | Promise<R>;
}

/**
 * Posts a run to the engine and records the outcome: `record.accepted` once the engine took it, `record.refused` when the
 * engine refused it (only then: a failure to record an acceptance rejects as it is, the run stays unrecorded, and the
 * next start posts it again). Resolves to what the recorder returns.
 */
export async function postAndRecord<R>(
  engine: SchedulerBaseDeps['engine'],
  post: ScheduledPost,
  record: PostRecorder<R>,
): Promise<R> {
  let accepted: Accepted;
  try {
    accepted = await engine.postScheduled(post.target, post.prompt, post.origin, { messageId: post.messageId });
  } catch (error) {
    return await record.refused(error);
  }
  return await record.accepted(accepted);
}

/**
 * A scheduler's one timer: `arm(dueAt)` (re)sets it to call `onDue` at the time `dueAt()` gives, or after `maxWaitMs` at
 * the most (a timer that wakes early finds nothing due and re-arms, so a clock jump or a sleeping machine is caught up
 * on). Arming only cancels before `start()` and after `stop()` (`dueAt` is not called then), and when `dueAt()` is null.
 * `dueAt` may read the store asynchronously: the latest `arm` wins over one still waiting for its due time. A `start()`
 * after a `stop()` arms again (the scheduler served again on this node after its `primary` lease came back).
 */
export class ScheduleTimer {
  #clock: Clock;
  #maxWaitMs: number;
  #onDue: () => void;
  #timer: Timer | null = null;
  /** Counts `arm` calls, so an arm still reading its due time gives way to a later arm or a stop. */
  #generation = 0;
  #started = false;
  #stopped = false;

  constructor(clock: Clock, maxWaitMs: number, onDue: () => void) {
    this.#clock = clock;
    this.#maxWaitMs = maxWaitMs;
    this.#onDue = onDue;
  }

  /** True between `start()` and `stop()`. */
  get started(): boolean {
    return this.#started && !this.#stopped;
  }

  /** True once `stop()` was called (until the next `start()`). */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** Lets `arm` set the timer from now on (again after a `stop`: the scheduler serves again on this node). */
  start(): void {
    this.#started = true;
    this.#stopped = false;
  }

  /** Cancels the timer until the next `start()`. */
  stop(): void {
    this.#stopped = true;
    this.#cancel();
  }

  /**
   * Cancels the timer, then, while started and not stopped, sets it for `dueAt()` (capped at `maxWaitMs` from now).
   * A synchronous `dueAt` sets the timer before `arm` returns; an asynchronous one by the time the result resolves.
   */
  arm(dueAt: () => number | null | Promise<number | null>): Promise<void> {
    this.#cancel();
    const generation = ++this.#generation;
    if (this.#stopped || !this.#started) return Promise.resolve();
    const at = dueAt();
    if (!(at instanceof Promise)) {
      this.#set(at);
      return Promise.resolve();
    }
    return at.then((value) => {
      if (generation === this.#generation && !this.#stopped) this.#set(value);
    });
  }

  #set(at: number | null): void {
    if (at === null) return;
    const delay = Math.min(Math.max(0, at - this.#clock.now()), this.#maxWaitMs);
    this.#timer = this.#clock.after(delay, () => {
      this.#timer = null;
      this.#onDue();
    });
  }

  #cancel(): void {
    this.#timer?.cancel();
    this.#timer = null;
  }
}
