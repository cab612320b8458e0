// The agent engine's per-session JSONL logs under `<home>/engine/`: one append-only file per engine session, written
// through JsonlLog (one write per record, group-committed fdatasync, torn tail cut on open). Records are untyped here;
// engine/log-records.ts gives them their types.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePrivateDir } from '../core/private-files.ts';
import { DirectorySync } from './directory-sync.ts';
import type { LogEntry, LogRecord, RepairReport } from './jsonl-log.ts';
import { fsyncDirectoryAsync, JsonlLog } from './jsonl-log.ts';
import type { LineNeedle, ScanReport } from './jsonl-scan.ts';
import { readFirstRecord, scanBackward } from './jsonl-scan.ts';
import type { RecordMirror } from './log-records.ts';

export interface EngineLogsOptions {
  /** Appends within this window share one fdatasync (group commit). */
  fsyncBatchMs: number;
  now: () => number;
  /** Most log files held open at once; the least recently used one is closed (after its pending sync) beyond it. */
  maxOpenLogs: number;
  /** Told about every repair made when a log is opened. */
  onRepair?: (sessionId: string, report: RepairReport) => void;
  /**
   * On PostgreSQL: every record is also written through to `log_records`; `sync` then covers that commit too, so
   * whatever a caller acknowledged after it is in the database (readable from any node).
   */
  mirror?: RecordMirror;
  /** Told when closing an evicted log failed (its pending sync failed). */
  onError?: (sessionId: string, error: unknown) => void;
}

const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;
const SUFFIX = '.jsonl';

/** The engine sessions' logs in one directory. */
export class EngineLogs {
  readonly dir: string;
  #open = new Map<string, JsonlLog>();
  /** New logs created together share their folder's sync. */
  readonly #directorySync = new DirectorySync(fsyncDirectoryAsync);
  #options: EngineLogsOptions;
  #closed = false;

  constructor(dir: string, options: EngineLogsOptions) {
    this.dir = dir;
    this.#options = options;
    ensurePrivateDir(dir);
  }

  /** Path of a session's log file. Throws for an id that cannot be a file name. */
  path(sessionId: string): string {
    if (!SAFE_ID.test(sessionId)) throw new Error(`invalid engine session id for a log file: ${sessionId}`);
    return join(this.dir, `${sessionId}${SUFFIX}`);
  }

  /** True when the session has a log file. */
  exists(sessionId: string): boolean {
    return existsSync(this.path(sessionId));
  }

  /** Ids of every session with a log file, sorted. */
  list(): string[] {
    return readdirSync(this.dir)
      .filter((name) => name.endsWith(SUFFIX))
      .map((name) => name.slice(0, -SUFFIX.length))
      .filter((id) => SAFE_ID.test(id))
      .sort();
  }

  #log(sessionId: string): JsonlLog {
    if (this.#closed) throw new Error('engine logs are closed');
    let log = this.#open.get(sessionId);
    if (log) {
      // Keep the map in least-recently-used order.
      this.#open.delete(sessionId);
      this.#open.set(sessionId, log);
      return log;
    }
    log = JsonlLog.open(this.path(sessionId), {
      fsyncBatchMs: this.#options.fsyncBatchMs,
      now: this.#options.now,
      directorySync: this.#directorySync,
    });
    if (log.repair) this.#options.onRepair?.(sessionId, log.repair);
    this.#open.set(sessionId, log);
    while (this.#open.size > this.#options.maxOpenLogs) {
      const [oldestId, oldest] = this.#open.entries().next().value as [string, JsonlLog];
      this.#open.delete(oldestId);
      oldest.close().catch((error: unknown) => this.#options.onError?.(oldestId, error));
    }
    return log;
  }

  /** Writes one record (one write call) and returns it; durability follows at the next group commit. */
  write(sessionId: string, entry: LogEntry): LogRecord {
    const record = this.#log(sessionId).write(entry);
    this.#options.mirror?.write('engine', sessionId, record);
    return record;
  }

  /** Resolves once everything written to this session's log so far is fdatasync'd (and, with a mirror, committed). */
  async sync(sessionId: string): Promise<void> {
    const mirror = this.#options.mirror;
    await (mirror ? Promise.all([this.#log(sessionId).sync(), mirror.sync()]) : this.#log(sessionId).sync());
  }

  /** Sequence number of the last record written to a session's log (opens it). */
  lastSeq(sessionId: string): number {
    return this.#log(sessionId).lastSeq;
  }

  /** The first record of a session's log, or null when it is missing, torn or unparseable. */
  readFirst(sessionId: string): LogRecord | null {
    return readFirstRecord(this.path(sessionId));
  }

  /** Visits a session's records from the last to the first until `visit` returns false (see jsonl-scan for `needle`). */
  scanBackward(sessionId: string, visit: (record: LogRecord) => boolean, needle?: LineNeedle): ScanReport {
    return scanBackward(this.path(sessionId), visit, undefined, needle);
  }

  /** Takes writes again after `closeAll` (the engine starting again in this process); logs reopen on first use. */
  reopen(): void {
    this.#closed = false;
  }

  /** Syncs and closes every open log; later writes throw (until `reopen`). */
  async closeAll(): Promise<void> {
    this.#closed = true;
    const logs = [...this.#open.values()];
    this.#open.clear();
    await Promise.all([...logs.map((log) => log.close()), this.#options.mirror?.sync()]);
  }
}
