// The engine sessions' registry and durable inboxes: sessions by id and by descriptor key, creation (session_created
// first), acceptance of messages (written and fdatasync'd before acknowledging, deduplicated by message id across
// restarts) and the group flush of accepted ids and session state to the index.
import type { Clock } from '../core/clock.ts';
import { AppError, errorMessage } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import type { Logger } from '../core/logger.ts';
import type { EngineIndex, EngineIndexRow, IndexedMessage } from '../store/engine-index.ts';
import type { EngineLogs } from '../store/engine-logs.ts';
import type { Accepted, SessionDescriptor } from './api.ts';
import { descriptorKey } from './descriptor.ts';
import type { EngineLogEntry, IncomingEntry } from './log-records.ts';
import { EngineSession } from './session.ts';

export interface InboxDeps {
  clock: Clock;
  logger: Logger;
  logs: EngineLogs;
  index: EngineIndex;
  /** Called when a session has a new message queued (the engine starts its loop). */
  onQueued(session: EngineSession): void;
  /** True once the engine stopped (its logs are closed) or started again (with another inbox). */
  closed(): boolean;
}

/** A system message entry; `messageId` defaults to a fresh `sys-…` id. */
export function systemEntry(text: string, origin: string, messageId = `sys-${newId(16)}`): IncomingEntry {
  return { type: 'incoming', messageId, kind: 'system', origin, text };
}

/** Every engine session and its inbox. */
export class Inbox {
  readonly sessions = new Map<string, EngineSession>();
  #byKey = new Map<string, EngineSession>();
  #deps: InboxDeps;
  /** The running index flush, and the one asked for while it runs. */
  #flushing: Promise<void> | null = null;
  #flushNext: Promise<void> | null = null;
  /** Counts the flushes that moved recent ids into the index (see accept). */
  #flushes = 0;

  constructor(deps: InboxDeps) {
    this.#deps = deps;
  }

  /** Adds a session (restored or new) to the registry. */
  register(session: EngineSession): void {
    this.sessions.set(session.id, session);
    this.#byKey.set(session.key, session);
  }

  /** Creates a session: its log starts with `session_created{descriptor}` (on disk with its first message's sync). */
  create(descriptor: SessionDescriptor, id: string = newId(12)): EngineSession {
    const session = new EngineSession({ id, descriptor, createdAt: this.#deps.clock.now() });
    this.write(session, { type: 'session_created', descriptor });
    this.register(session);
    return session;
  }

  /** The session of this descriptor's key, created on first use. */
  getOrCreate(descriptor: SessionDescriptor): EngineSession {
    return this.#byKey.get(descriptorKey(descriptor)) ?? this.create(descriptor);
  }

  /** Writes one record to a session's log (one write call); returns its seq. */
  write(session: EngineSession, entry: EngineLogEntry): number {
    // A turn of a run that ended may still be winding down: it must not write into the logs a later run reopened.
    if (this.#deps.closed()) throw new AppError('unavailable', 'the agent engine is stopped');
    const record = this.#deps.logs.write(session.id, entry);
    session.updatedAt = record.ts;
    return record.seq;
  }

  /** Resolves once everything written to the session's log is on disk. */
  async sync(session: EngineSession): Promise<void> {
    const seq = this.#deps.logs.lastSeq(session.id);
    await this.#deps.logs.sync(session.id);
    session.markDurable(seq);
  }

  /**
   * Puts a message into a session's inbox: written to its log and fdatasync'd before this resolves. A message id the
   * session already accepted is acknowledged as a duplicate (once the original is on disk) and not queued again.
   */
  async accept(session: EngineSession, entry: IncomingEntry): Promise<Accepted> {
    const base = { sessionId: session.id, messageId: entry.messageId };
    // Accepted before: the id is among the recent ones or in the index. No await between the last check and the write
    // below, so an accept of the same id that wrote meanwhile is seen in the recent ids; a flush that moved recent ids
    // into the index while the lookup ran makes it look again.
    let duplicate = session.recentIds.has(entry.messageId);
    while (!duplicate) {
      const flushes = this.#flushes;
      duplicate =
        (await this.#deps.index.hasMessage(session.id, entry.messageId)) || session.recentIds.has(entry.messageId);
      if (flushes === this.#flushes) break;
    }
    // The engine may have stopped while the index was looked up.
    if (this.#deps.closed()) throw new AppError('unavailable', 'the agent engine is stopped');
    if (duplicate) {
      await this.sync(session);
      return { ...base, duplicate: true };
    }
    const seq = this.write(session, entry);
    session.recentIds.add(entry.messageId);
    session.inflight.add(seq);
    if (entry.kind === 'user') session.lastUserAt = session.updatedAt;
    session.queue.push({ ...entry, seq });
    this.#deps.onQueued(session);
    try {
      await this.sync(session);
    } finally {
      session.inflight.delete(seq);
    }
    session.unindexed.push({ messageId: entry.messageId, seq });
    return { ...base, duplicate: false };
  }

  /**
   * Writes the index rows of changed sessions and the accepted ids now on disk, in one transaction; resolves once it
   * committed (or failed). A session's indexed seq never passes a message still on its way to disk. A failure is logged
   * and retried at the next flush. Flushes run one at a time: a flush asked for while one runs follows it.
   */
  flushIndex(): Promise<void> {
    if (!this.#flushing) {
      this.#flushing = this.#flushOnce().finally(() => {
        this.#flushing = null;
      });
      return this.#flushing;
    }
    this.#flushNext ??= this.#flushing.then(() => {
      this.#flushNext = null;
      return this.flushIndex();
    });
    return this.#flushNext;
  }

  async #flushOnce(): Promise<void> {
    const rows: EngineIndexRow[] = [];
    const messages: IndexedMessage[] = [];
    const taken = new Map<EngineSession, number>();
    for (const s of this.sessions.values()) {
      if (!s.dirty && s.unindexed.length === 0) continue;
      const floor = s.inflight.size > 0 ? Math.min(...s.inflight) - 1 : Infinity;
      const indexedSeq = Math.min(s.durableSeq, floor);
      rows.push({
        id: s.id,
        key: s.key,
        type: s.descriptor.type,
        createdAt: s.createdAt,
        updatedAt: s.updatedAt,
        lastUserAt: s.lastUserAt,
        indexedSeq,
      });
      for (const m of s.unindexed) messages.push({ sessionId: s.id, messageId: m.messageId, seq: m.seq });
      taken.set(s, s.unindexed.length);
      // Cleared now: a change while the transaction runs marks the session again for the next flush.
      s.dirty = false;
    }
    if (rows.length === 0) return;
    try {
      await this.#deps.index.apply(rows, messages);
    } catch (error) {
      for (const s of taken.keys()) s.dirty = true;
      this.#deps.logger.error({ err: errorMessage(error) }, 'engine index flush failed; retrying at the next flush');
      return;
    }
    for (const [s, count] of taken) {
      for (const m of s.unindexed.slice(0, count)) s.recentIds.delete(m.messageId);
      s.unindexed = s.unindexed.slice(count);
    }
    this.#flushes += 1;
  }
}
