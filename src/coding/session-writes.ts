// A coding session's writes: log records appended (before the session announces them) and row patches applied to its
// record at once and committed in the order they were made; also the chat channels' views kept on the row.
import type { ChannelView, SessionPatch, StoredSession } from '../store/coding-session-types.ts';
import type { SessionLogEntry } from './session-log.ts';

/** Where a Session writes: its log (append-before-announce) and its row. */
export interface SessionPersistence {
  log(entry: SessionLogEntry): { seq: number };
  /** Writes the patch to the row; resolves once it committed. */
  update(patch: SessionPatch): Promise<void>;
}

/** One session's writes to its log and its row; patches change `record` (the session's own object) at once. */
export class SessionWrites {
  readonly #record: StoredSession;
  readonly #persistence: SessionPersistence;
  /** Settles once every row write issued so far committed (rejects with the first that failed). */
  #stored: Promise<void> = Promise.resolve();

  constructor(record: StoredSession, persistence: SessionPersistence) {
    this.#record = record;
    this.#persistence = persistence;
  }

  /** Resolves once every change to the row made so far committed (rejects with the first write that failed). */
  get stored(): Promise<void> {
    return this.#stored;
  }

  /** Appends `entry` to the session's log; returns its seq. */
  log(entry: SessionLogEntry): { seq: number } {
    return this.#persistence.log(entry);
  }

  /**
   * Applies the patch to the record at once and writes it to the row; the writes commit in the order they were made
   * (see `stored`). Resolves once this one committed; a caller that does not await it still has it tracked in `stored`.
   * An empty patch writes nothing.
   */
  persist(patch: SessionPatch): Promise<void> {
    if (Object.keys(patch).length === 0) return Promise.resolve();
    Object.assign(this.#record, patch);
    const write = this.#persistence.update(patch);
    this.#stored = Promise.all([this.#stored, write]).then(() => undefined);
    return write;
  }

  /** Records `channel`'s view: a `foreground` log record, then the row's views. Resolves once the row committed. */
  setView(channel: string, view: ChannelView): Promise<void> {
    this.log({ type: 'foreground', channel, on: view.on });
    return this.persist({ foreground: { ...this.#record.foreground, [channel]: view } });
  }

  /** Moves a channel's "seen up to" mark without changing whether it streams (row only; nothing when unchanged). */
  markSeen(channel: string, seenSeq: number): void {
    const view = this.#record.foreground[channel];
    if (!view || view.seenSeq === seenSeq) return;
    void this.persist({ foreground: { ...this.#record.foreground, [channel]: { ...view, seenSeq } } });
  }
}
