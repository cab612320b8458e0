// The read side of the coding sessions: stored lists, pages and metrics, a session's output, transcript and log
// position (from the live session, this node's log, or the cluster's records), following its log, and the channels'
// views of it (what each has seen, whether it streams it).
import type { SessionStatus, StoredSession } from '../store/coding-session-types.ts';
import type { CodingSessionStore } from '../store/coding-sessions.ts';
import type { LogRecord } from '../store/jsonl-log.ts';
import type { SessionLogs, SessionRecordSource } from '../store/session-logs.ts';
import { localRecords } from '../store/session-logs.ts';
import type { SessionPool } from './session-pool.ts';
import type { TranscriptEntry, TranscriptView } from './transcript.ts';
import { transcriptOf } from './transcript.ts';

/** What SessionReads uses. */
export interface SessionReadsDeps {
  store: Pick<CodingSessionStore, 'list' | 'page' | 'activeByNode' | 'metrics' | 'update'>;
  logs: SessionLogs;
  /** Where a session's records are read on whichever node it runs (see SessionManagerDeps.records). */
  records?: SessionRecordSource;
  pool: SessionPool;
}

/** Reads of stored and live sessions, and the channels' views (see the file's comment). */
export class SessionReads {
  readonly #deps: SessionReadsDeps;

  /** Takes the store, the logs, the cluster's records if any, and the pool of live sessions. */
  constructor(deps: SessionReadsDeps) {
    this.#deps = deps;
  }

  /** All stored sessions, newest first, optionally filtered by status. */
  list(statuses?: readonly SessionStatus[]): Promise<StoredSession[]> {
    return this.#deps.store.list(statuses);
  }

  /** One page of stored sessions, newest first (see CodingSessionStore.page). */
  page(options: Parameters<CodingSessionStore['page']>[0]): ReturnType<CodingSessionStore['page']> {
    return this.#deps.store.page(options);
  }

  /** Sessions starting or running per node of the cluster (one grouped query). */
  activeByNode(): Promise<Map<string, number>> {
    return this.#deps.store.activeByNode();
  }

  /** Cost, status counts, durations and the most expensive session, over every run ever recorded. */
  stats(): ReturnType<CodingSessionStore['metrics']> {
    return this.#deps.store.metrics();
  }

  /** Last output blocks of a session (live buffer, or read back from its log), with their log seqs. */
  outputBlocks(record: StoredSession, afterSeq = 0): { seq: number; text: string }[] {
    const live = this.#deps.pool.byId(record.id);
    if (live && live.output.covers(afterSeq)) return live.output.after(afterSeq);
    return outputOf(this.#deps.logs.read(record.id, afterSeq + 1));
  }

  /** Like `outputBlocks` (all of them), for a session on any node of the cluster. */
  async readOutputBlocks(record: StoredSession): Promise<{ seq: number; text: string }[]> {
    if (!this.#deps.records || this.#deps.pool.has(record.id)) return this.outputBlocks(record);
    return outputOf(await this.#deps.records.read(record.id));
  }

  /** What a session did, read back from its log: text, tool calls and permission requests (`text`: text only). */
  transcript(record: StoredSession, view: TranscriptView = 'all'): TranscriptEntry[] {
    return transcriptOf(this.#deps.logs.read(record.id), view);
  }

  /** Sequence number of the newest record of a session's log. */
  lastSeq(sessionId: string): number {
    return this.#deps.logs.lastSeq(sessionId);
  }

  /** Like `transcript`, for a session on any node of the cluster (read from the database when it is not live here). */
  async readTranscript(record: StoredSession, view: TranscriptView = 'all'): Promise<TranscriptEntry[]> {
    if (!this.#deps.records || this.#deps.pool.has(record.id)) return this.transcript(record, view);
    return transcriptOf(await this.#deps.records.read(record.id), view);
  }

  /** Like `lastSeq`, for a session on any node of the cluster. */
  async readLastSeq(sessionId: string): Promise<number> {
    if (!this.#deps.records || this.#deps.pool.has(sessionId)) return this.lastSeq(sessionId);
    return this.#deps.records.lastSeq(sessionId);
  }

  /**
   * Calls `listener` with every record of a session on any node of the cluster from `fromSeq` on, each once and in
   * order (see SessionRecordSource.follow); returns the function that stops it.
   */
  follow(sessionId: string, fromSeq: number, listener: (record: LogRecord) => void): () => void {
    return (this.#deps.records ?? localRecords(this.#deps.logs)).follow(sessionId, fromSeq, listener);
  }

  /**
   * Records that a channel has seen a session up to its newest log record and whether it streams it live (claude_fg /
   * claude_bg). Written to the log as a `foreground` record; a live session signals `view`. Resolves once stored.
   */
  async setView(record: StoredSession, channel: string, on: boolean): Promise<void> {
    const view = { on, seenSeq: this.lastSeq(record.id) };
    const live = this.#deps.pool.byId(record.id);
    if (live) {
      await live.setView(channel, view);
      return;
    }
    await this.#deps.logs.prepare(record.id);
    this.#deps.logs.write(record.id, { type: 'foreground', channel, on });
    await this.#deps.store.update(record.id, { foreground: { ...record.foreground, [channel]: view } });
  }

  /**
   * Moves the "seen up to" log seq of a channel that already has a view of a live session (the notifier, after it
   * delivered streamed text or dropped undelivered text). No-op for a session not in memory or an unknown channel.
   */
  markSeen(sessionId: string, channel: string, seenSeq: number): void {
    this.#deps.pool.byId(sessionId)?.markSeen(channel, seenSeq);
  }
}

/** The output blocks among a log's records, with their seqs. */
function outputOf(records: readonly LogRecord[]): { seq: number; text: string }[] {
  return records
    .filter((r) => r.type === 'output' && typeof r.text === 'string')
    .map((r) => ({ seq: r.seq, text: r.text as string }));
}
