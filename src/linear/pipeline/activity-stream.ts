// What one dispatch tells its Linear agent session: the agent's text as thoughts and its tool calls as actions,
// coalesced so Linear is not spammed, plus lifecycle messages posted at once. Posts go out one at a time, in order, from
// one WorkLoop that also waits out the coalescing window on the clock.
import type { Clock } from '../../core/clock.ts';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { StepResult } from '../../core/work-loop.ts';
import { WorkLoop } from '../../core/work-loop.ts';
import type { ActivityContent, LinearApi } from '../api/types.ts';
import { LinearApiError } from '../api/types.ts';

/** Longest thought body sent (the tail of the coalesced text is kept). */
export const MAX_THOUGHT_CHARS = 1_000;
/** Longest action parameter sent. */
export const MAX_PARAMETER_CHARS = 200;

export interface ActivityStreamOptions {
  linear: Pick<LinearApi, 'createAgentActivity'>;
  agentSessionId: string;
  clock: Clock;
  logger: Logger;
  /** Thoughts and actions are posted at most once per this window (the first one at once). */
  throttleMs: number;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function tail(text: string, max: number): string {
  return text.length > max ? `…${text.slice(-(max - 1))}` : text;
}

interface Outgoing {
  content: ActivityContent;
  sent: (ok: boolean) => void;
}

/**
 * The stream of one Linear agent session. `thought`/`action` are buffered and coalesced: the first in a quiet window
 * goes out at once, the rest are merged (all text into one thought, the tool calls into one action naming the last
 * and counting the others) and sent when the window ends or on `flush`. `post` sends a message right away, after
 * whatever is buffered. A user error from Linear (e.g. the agent session was deleted) turns the stream off: nothing
 * is retried in a loop.
 */
export class ActivityStream {
  #options: ActivityStreamOptions;
  #texts: string[] = [];
  #tools: { action: string; parameter: string }[] = [];
  #firstPending: 'thought' | 'action' | null = null;
  /** Set by `close`: buffered items wait for the next item instead of the window's end. */
  #windowClosed = false;
  #lastPostAt = Number.NEGATIVE_INFINITY;
  #outgoing: Outgoing[] = [];
  #loop: WorkLoop;
  #dead = false;

  constructor(options: ActivityStreamOptions) {
    this.#options = options;
    // Posting never throws (failures are logged in `#postOne`), so the loop's backoff is only a guard.
    this.#loop = new WorkLoop({ clock: options.clock, step: () => this.#step(), retryDelay: () => options.throttleMs });
  }

  get agentSessionId(): string {
    return this.#options.agentSessionId;
  }

  /** False once Linear refused the session for good. */
  get alive(): boolean {
    return !this.#dead;
  }

  /** Buffers agent text (sent as a thought). */
  thought(text: string): void {
    if (!text.trim() || this.#dead) return;
    this.#texts.push(text.trim());
    this.#firstPending ??= 'thought';
    this.#arm();
  }

  /** Buffers a tool call (sent as an action with a one-line parameter). */
  action(action: string, parameter: string): void {
    if (this.#dead) return;
    this.#tools.push({ action, parameter: oneLine(parameter, MAX_PARAMETER_CHARS) });
    this.#firstPending ??= 'action';
    this.#arm();
  }

  /** Sends what is buffered, then `content`; resolves with whether Linear took it. */
  post(content: ActivityContent): Promise<boolean> {
    this.#drain();
    return this.#send(content);
  }

  /** Sends what is buffered now; resolves when every post so far is done. */
  async flush(): Promise<void> {
    this.#drain();
    this.#loop.kick();
    await this.#loop.idle();
  }

  /** Ends the coalescing window (buffered items are sent first). */
  async close(): Promise<void> {
    await this.flush();
    this.#windowClosed = true;
    this.#loop.kick();
  }

  /** The first item of a quiet window goes out at once; later ones wait for the window's end (the loop's wake-up). */
  #arm(): void {
    this.#windowClosed = false;
    if (this.#windowWait() <= 0) this.#drain();
    this.#loop.kick();
  }

  #windowWait(): number {
    return this.#lastPostAt + this.#options.throttleMs - this.#options.clock.now();
  }

  /** Posts the next outgoing item, or moves the buffer out when its window has ended, or sleeps until then. */
  async #step(): Promise<StepResult> {
    const next = this.#outgoing.shift();
    if (next) {
      next.sent(await this.#postOne(next.content));
      return 'more';
    }
    if (this.#texts.length === 0 && this.#tools.length === 0) return 'quiet';
    if (this.#windowClosed) return 'quiet';
    const wait = this.#windowWait();
    if (wait > 0) return { wakeInMs: wait };
    this.#drain();
    return 'more';
  }

  /** Turns the buffer into at most one thought and one action, in the order they first appeared. */
  #drain(): void {
    const items: ActivityContent[] = [];
    if (this.#texts.length > 0)
      items.push({ type: 'thought', body: tail(this.#texts.join('\n\n'), MAX_THOUGHT_CHARS) });
    if (this.#tools.length > 0) {
      const last = this.#tools[this.#tools.length - 1] as { action: string; parameter: string };
      const more = this.#tools.length - 1;
      const parameter =
        more > 0 ? `${last.parameter} (+${more} earlier tool call${more === 1 ? '' : 's'})` : last.parameter;
      items.push({ type: 'action', action: last.action, parameter });
    }
    if (this.#firstPending === 'action') items.reverse();
    this.#texts = [];
    this.#tools = [];
    this.#firstPending = null;
    if (items.length === 0) return;
    this.#lastPostAt = this.#options.clock.now();
    for (const item of items) void this.#send(item);
  }

  #send(content: ActivityContent): Promise<boolean> {
    const sent = new Promise<boolean>((resolve) => this.#outgoing.push({ content, sent: resolve }));
    this.#loop.kick();
    return sent;
  }

  async #postOne(content: ActivityContent): Promise<boolean> {
    const { linear, agentSessionId, logger } = this.#options;
    if (this.#dead) return false;
    try {
      await linear.createAgentActivity(agentSessionId, content);
      return true;
    } catch (error) {
      const final = error instanceof LinearApiError && !error.retryable;
      if (final) this.#dead = true;
      logger.warn(
        { err: errorMessage(error), agentSessionId, activity: content.type, final },
        'could not post a Linear agent activity',
      );
      return false;
    }
  }
}
