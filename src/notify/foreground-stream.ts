import type { ChannelTarget } from '../channels/connector.ts';
import type { Session } from '../coding/session.ts';
import type { Clock, Timer } from '../core/clock.ts';

/** Assistant text gathered for one channel of one session, ready to send as one message. */
export interface TextBatch {
  session: Session;
  /** The channel string as stored in the session's foreground views. */
  channel: string;
  target: ChannelTarget;
  /** The blocks, joined by newlines. */
  text: string;
  /** Log seqs of the first and last block in the batch. */
  firstSeq: number;
  lastSeq: number;
}

interface Pending {
  session: Session;
  channel: string;
  target: ChannelTarget;
  texts: string[];
  firstSeq: number;
  lastSeq: number;
  timer: Timer;
}

/**
 * Debounces streamed assistant text per (session, channel): the first block opens a window of `windowMs`; every block
 * that arrives within it joins the batch, which is handed to `deliver` as one message when the window closes (so the
 * delay stays bounded even while the agent writes without pause) or when it is flushed early.
 */
export class ForegroundStream {
  #clock: Clock;
  #windowMs: number;
  #deliver: (batch: TextBatch) => void;
  #pending = new Map<string, Pending>();

  constructor(options: { clock: Clock; windowMs: number; deliver: (batch: TextBatch) => void }) {
    this.#clock = options.clock;
    this.#windowMs = options.windowMs;
    this.#deliver = options.deliver;
  }

  /** Adds one block (written at log seq `seq`) for a channel; opens the window if none is open. */
  add(session: Session, channel: string, target: ChannelTarget, text: string, seq: number): void {
    const key = keyOf(session.id, channel);
    const pending = this.#pending.get(key);
    if (pending) {
      pending.texts.push(text);
      pending.lastSeq = seq;
      return;
    }
    const timer = this.#clock.after(this.#windowMs, () => this.#flush(key));
    this.#pending.set(key, { session, channel, target, texts: [text], firstSeq: seq, lastSeq: seq, timer });
  }

  /** Delivers every pending batch of a session now (before a tool line or a lifecycle message). */
  flushSession(sessionId: string): void {
    for (const [key, pending] of [...this.#pending]) if (pending.session.id === sessionId) this.#flush(key);
  }

  /** Delivers every pending batch now. */
  flushAll(): void {
    for (const key of [...this.#pending.keys()]) this.#flush(key);
  }

  /** Drops a channel's pending batch of a session without delivering it; returns it (null when there was none). */
  discard(sessionId: string, channel: string): TextBatch | null {
    const key = keyOf(sessionId, channel);
    const pending = this.#pending.get(key);
    if (!pending) return null;
    pending.timer.cancel();
    this.#pending.delete(key);
    return toBatch(pending);
  }

  /** Number of open batches. */
  get size(): number {
    return this.#pending.size;
  }

  #flush(key: string): void {
    const pending = this.#pending.get(key);
    if (!pending) return;
    pending.timer.cancel();
    this.#pending.delete(key);
    this.#deliver(toBatch(pending));
  }
}

function keyOf(sessionId: string, channel: string): string {
  return `${sessionId}\u0000${channel}`;
}

function toBatch(p: Pending): TextBatch {
  return {
    session: p.session,
    channel: p.channel,
    target: p.target,
    text: p.texts.join('\n'),
    firstSeq: p.firstSeq,
    lastSeq: p.lastSeq,
  };
}
