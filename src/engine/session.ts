// One engine session in memory: its descriptor, its inbox (every entry already on disk), its loop state and the
// cached, bounded history. The log on disk is the truth; this is rebuilt from it on restore.
import type { SessionDescriptor } from './api.ts';
import { descriptorKey } from './descriptor.ts';
import type { History } from './history.ts';
import type { EngineTurnOutcome, IncomingEntry } from './log-records.ts';

/** A durably accepted message waiting for its turn. */
export interface QueuedMessage extends IncomingEntry {
  /** Seq of its `incoming` record. */
  seq: number;
}

/** Someone waiting for a subagent's first reply (askAgent). */
export interface ReplyWaiter {
  resolve(text: string): void;
  reject(error: Error): void;
}

/** The in-memory state of one engine session. */
export class EngineSession {
  readonly id: string;
  readonly descriptor: SessionDescriptor;
  readonly key: string;
  readonly createdAt: number;
  /** Messages on disk, not started yet, oldest first. */
  readonly queue: QueuedMessage[] = [];
  /** The message whose turn runs now. */
  current: QueuedMessage | null = null;
  /** Aborts the running turn's model call (on stop). */
  abort: AbortController | null = null;
  updatedAt: number;
  lastUserAt: number | null;
  lastOutcome: EngineTurnOutcome | null;
  /** Loaded from the log on the first turn after start, then kept up to date. */
  history: History | null = null;
  /** Message ids written to the log and not yet in the SQLite index. */
  readonly recentIds = new Set<string>();
  /** Seqs of accepted messages written but not yet on disk. */
  readonly inflight = new Set<number>();
  /** Accepted message ids that are on disk and wait for the next index flush. */
  unindexed: { messageId: string; seq: number }[] = [];
  /** Highest seq known to be on disk. */
  durableSeq = 0;
  /** Seq the SQLite index reflects. */
  indexedSeq = 0;
  /** The index row needs writing. */
  dirty = true;
  /** askAgent's wait for the first reply; consumes that reply instead of the parent. */
  waiter: ReplyWaiter | null = null;

  constructor(init: {
    id: string;
    descriptor: SessionDescriptor;
    createdAt: number;
    updatedAt?: number;
    lastUserAt?: number | null;
    lastOutcome?: EngineTurnOutcome | null;
  }) {
    this.id = init.id;
    this.descriptor = init.descriptor;
    this.key = descriptorKey(init.descriptor);
    this.createdAt = init.createdAt;
    this.updatedAt = init.updatedAt ?? init.createdAt;
    this.lastUserAt = init.lastUserAt ?? null;
    this.lastOutcome = init.lastOutcome ?? null;
  }

  /** Records that every record up to `seq` is on disk. */
  markDurable(seq: number): void {
    if (seq > this.durableSeq) {
      this.durableSeq = seq;
      this.dirty = true;
    }
  }

  /** True while a turn runs or messages wait. */
  get busy(): boolean {
    return this.current !== null || this.queue.length > 0;
  }
}
