import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePrivateDir } from '../core/private-files.ts';
import { DirectorySync } from './directory-sync.ts';
import type { LogEntry, LogRecord, RepairReport } from './jsonl-log.ts';
import { fsyncDirectoryAsync, JsonlLog } from './jsonl-log.ts';
import type { LogRecordStore, RecordMirror } from './log-records.ts';
import { replaceLogFile } from './log-records.ts';

export type Listener = (record: LogRecord) => void;

export interface SessionLogsOptions {
  fsyncBatchMs: number;
  now: () => number;
  /** Told about every repair made when a log is opened. */
  onRepair?: (sessionId: string, report: RepairReport) => void;
  /**
   * On PostgreSQL: every record is also written through to `log_records`; `sync` then covers that commit too, so
   * whatever a caller acknowledged after it is in the database (readable from any node).
   */
  mirror?: RecordMirror;
  /** With `mirror`: the table itself, which `prepare` brings a stale local log up to. */
  database?: LogRecordStore;
}

const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The per-session JSONL logs under one directory, with live subscriptions for tailing. */
export class SessionLogs {
  readonly dir: string;
  #open = new Map<string, JsonlLog>();
  #listeners = new Map<string, Set<Listener>>();
  #options: SessionLogsOptions;
  /** New logs created together (a burst of launches) share their folder's sync. */
  readonly #directorySync = new DirectorySync(fsyncDirectoryAsync);

  constructor(dir: string, options: SessionLogsOptions) {
    this.dir = dir;
    this.#options = options;
    ensurePrivateDir(dir);
  }

  #log(sessionId: string): JsonlLog {
    if (!SAFE_ID.test(sessionId)) throw new Error(`invalid session id for a log file: ${sessionId}`);
    let log = this.#open.get(sessionId);
    if (!log) {
      log = JsonlLog.open(join(this.dir, `${sessionId}.jsonl`), {
        fsyncBatchMs: this.#options.fsyncBatchMs,
        now: this.#options.now,
        directorySync: this.#directorySync,
      });
      if (log.repair) this.#options.onRepair?.(sessionId, log.repair);
      this.#open.set(sessionId, log);
    }
    return log;
  }

  /** Writes a record (one write call) and tells subscribers; durability follows at the next group commit. */
  write(sessionId: string, entry: LogEntry): LogRecord {
    const record = this.#log(sessionId).write(entry);
    this.#options.mirror?.write('session', sessionId, record);
    for (const listener of this.#listeners.get(sessionId) ?? []) listener(record);
    return record;
  }

  /**
   * Cluster: before this node writes to the log of a session that may have been written on another node (a resume
   * here, a lost node's session, a view of a session running elsewhere), brings the local file up to the table when
   * the table is ahead (rewritten from it), so the records this node adds continue its numbering. No-op on SQLite.
   */
  async prepare(sessionId: string): Promise<void> {
    const { database, mirror } = this.#options;
    if (!database) return;
    await mirror?.sync();
    const local = this.#log(sessionId).lastSeq;
    if ((await database.lastSeq('session', sessionId)) <= local) return;
    const records = await database.read('session', sessionId);
    this.#open.get(sessionId)?.discard();
    this.#open.delete(sessionId);
    replaceLogFile(join(this.dir, `${sessionId}.jsonl`), records);
  }

  /** Writes a record and resolves once it is fdatasync'd. */
  async append(sessionId: string, entry: LogEntry): Promise<LogRecord> {
    const record = this.write(sessionId, entry);
    await this.sync(sessionId);
    return record;
  }

  /** Resolves when everything written to this session's log is on disk (and, with a mirror, committed). */
  async sync(sessionId: string): Promise<void> {
    const mirror = this.#options.mirror;
    await (mirror ? Promise.all([this.#log(sessionId).sync(), mirror.sync()]) : this.#log(sessionId).sync());
  }

  /** Records with `seq >= fromSeq`, in order. */
  read(sessionId: string, fromSeq = 1): LogRecord[] {
    return this.#log(sessionId).readFrom(fromSeq);
  }

  /** Sequence number of the last record of a session's log. */
  lastSeq(sessionId: string): number {
    return this.#log(sessionId).lastSeq;
  }

  /** Calls `listener` for every record written from now on; returns the unsubscribe function. */
  subscribe(sessionId: string, listener: Listener): () => void {
    let set = this.#listeners.get(sessionId);
    if (!set) {
      set = new Set();
      this.#listeners.set(sessionId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.#listeners.delete(sessionId);
    };
  }

  /** Closes the file handle of a session's log (it reopens on next use). */
  async release(sessionId: string): Promise<void> {
    const log = this.#open.get(sessionId);
    this.#open.delete(sessionId);
    await log?.close();
  }

  /** Deletes a session's log file (synchronously, so no later reader sees it). */
  remove(sessionId: string): void {
    this.#open.get(sessionId)?.discard();
    this.#open.delete(sessionId);
    rmSync(join(this.dir, `${sessionId}.jsonl`), { force: true });
    this.#options.mirror?.remove('session', sessionId);
  }

  /** Syncs and closes every open log. */
  async closeAll(): Promise<void> {
    const logs = [...this.#open.values()];
    this.#open.clear();
    await Promise.all([...logs.map((log) => log.close()), this.#options.mirror?.sync()]);
  }
}

/** Where a session's records are read from, on whichever node it runs (see cluster/record-reader.ts). */
export interface SessionRecordSource {
  /** Records of a session's log with `seq >= fromSeq`, in order. */
  read(sessionId: string, fromSeq?: number): Promise<LogRecord[]>;
  /** The newest seq of a session's log (0 when empty). */
  lastSeq(sessionId: string): Promise<number>;
  /**
   * Calls `listener` with every record of the session from `fromSeq` on (those written already, then live ones), each
   * once and in order; returns the function that stops it. A local session's history is delivered before this returns.
   */
  follow(sessionId: string, fromSeq: number, listener: (record: LogRecord) => void): () => void;
}

/** The SessionRecordSource of a cluster of one: every session's log is a file of this node. */
export function localRecords(logs: SessionLogs): SessionRecordSource {
  return {
    read: async (sessionId, fromSeq) => logs.read(sessionId, fromSeq),
    lastSeq: async (sessionId) => logs.lastSeq(sessionId),
    follow(sessionId, fromSeq, listener) {
      let sent = fromSeq - 1;
      let backlog: LogRecord[] | null = [];
      const deliver = (record: LogRecord): void => {
        if (record.seq <= sent) return;
        sent = record.seq;
        listener(record);
      };
      // Live records are held while the history is read, so nothing falls between the two.
      const unsubscribe = logs.subscribe(sessionId, (record) => {
        if (backlog) backlog.push(record);
        else deliver(record);
      });
      for (const record of logs.read(sessionId, fromSeq)) deliver(record);
      for (const record of backlog) deliver(record);
      backlog = null;
      return unsubscribe;
    },
  };
}
