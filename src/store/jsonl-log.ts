import {
  closeSync,
  existsSync,
  fdatasync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readSync,
  writeSync,
} from 'node:fs';
import { open as openFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Clock, Timer } from '../core/clock.ts';
import { systemClock } from '../core/clock.ts';
import { openPrivate } from '../core/private-files.ts';
import type { DirectorySync } from './directory-sync.ts';

/** One line of a log: every record carries a format version, a per-file sequence number and a timestamp. */
export interface LogRecord {
  v: 1;
  seq: number;
  ts: number;
  type: string;
  [key: string]: unknown;
}

/** What a caller hands to `write`/`append`: the record without the envelope fields. */
export type LogEntry = { type: string } & Record<string, unknown>;

export interface JsonlLogOptions {
  /** Appends within this window share one fdatasync (group commit); 0 syncs on the next tick. */
  fsyncBatchMs?: number;
  /** Source of `ts`; default the system clock. */
  now?: () => number;
  /**
   * Times the group commit. Default a system clock whose timers hold the process open (an append awaits its sync); a
   * manual test clock would hold every append until advanced.
   */
  timers?: Pick<Clock, 'after'>;
  /** Shares the directory sync of a new log with the other logs created in its folder at the same time. */
  directorySync?: DirectorySync;
}

/** What `open` had to cut from the end of a damaged file. */
export interface RepairReport {
  truncatedBytes: number;
  droppedLines: number;
}

interface SyncWaiter {
  upTo: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

/** fsyncs a directory so a newly created file's entry survives power loss. */
export function fsyncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** fsyncs a directory off the event loop (in the thread pool); resolves once the entry is on disk. */
export async function fsyncDirectoryAsync(dir: string): Promise<void> {
  const handle = await openFile(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function readAll(fd: number): Buffer {
  const size = fstatSync(fd).size;
  const buffer = Buffer.alloc(size);
  let offset = 0;
  while (offset < size) {
    const n = readSync(fd, buffer, offset, size - offset, offset);
    if (n === 0) break;
    offset += n;
  }
  return buffer.subarray(0, offset);
}

/** Parses one line of a log; null when it is not a JSON object with a numeric `seq` and a string `type`. */
export function parseLine(line: string): LogRecord | null {
  try {
    const value: unknown = JSON.parse(line);
    if (typeof value !== 'object' || value === null) return null;
    const record = value as Partial<LogRecord>;
    return typeof record.seq === 'number' && typeof record.type === 'string' ? (record as LogRecord) : null;
  } catch {
    return null;
  }
}

/**
 * An append-only JSONL file. Each record is one `write` of one line (so a process crash never leaves a
 * half-record before an acknowledged one); fdatasync is group-committed; a torn tail is cut off on open.
 */
export class JsonlLog {
  readonly path: string;
  readonly repair: RepairReport | null;
  #fd: number;
  #seq: number;
  #written = 0;
  #synced = 0;
  #syncing = false;
  #timer: Timer | null = null;
  #waiters: SyncWaiter[] = [];
  #batchMs: number;
  #now: () => number;
  #timers: Pick<Clock, 'after'>;
  #closed = false;
  #malformed = 0;
  /** The fsync of the directory entry of a log this open created; every sync() waits for it too. */
  #dirSync: Promise<void> | null = null;

  private constructor(
    path: string,
    fd: number,
    lastSeq: number,
    repair: RepairReport | null,
    options: JsonlLogOptions,
  ) {
    this.path = path;
    this.#fd = fd;
    this.#seq = lastSeq;
    this.repair = repair;
    this.#batchMs = options.fsyncBatchMs ?? 0;
    const fallback = systemClock({ holdProcess: true });
    this.#now = options.now ?? (() => fallback.now());
    this.#timers = options.timers ?? fallback;
  }

  /** Opens (creating if needed, 0600) the log at `path`, repairing a torn or unparseable tail. */
  static open(path: string, options: JsonlLogOptions = {}): JsonlLog {
    const existed = existsSync(path);
    const fd = openPrivate(path, 'a+');
    const data = readAll(fd);
    let goodEnd = data.lastIndexOf(0x0a) + 1;
    let droppedLines = goodEnd < data.length ? 1 : 0;
    let lastSeq = 0;
    while (goodEnd > 0) {
      const start = data.lastIndexOf(0x0a, goodEnd - 2) + 1;
      const record = parseLine(data.subarray(start, goodEnd - 1).toString('utf8'));
      if (record) {
        lastSeq = record.seq;
        break;
      }
      goodEnd = start;
      droppedLines += 1;
    }
    let repair: RepairReport | null = null;
    if (goodEnd < data.length) {
      ftruncateSync(fd, goodEnd);
      fsyncSync(fd);
      repair = { truncatedBytes: data.length - goodEnd, droppedLines };
    }
    const log = new JsonlLog(path, fd, lastSeq, repair, options);
    // A new file's directory entry is made durable off the event loop (a burst of new logs does not stall it); the
    // first sync() of the log waits for it, so nothing is reported durable before its file is.
    if (!existed) log.#syncDirectory(dirname(path), options.directorySync);
    return log;
  }

  #syncDirectory(dir: string, shared: DirectorySync | undefined): void {
    const pending = (shared ? shared.sync(dir) : fsyncDirectoryAsync(dir)).then(() => {
      if (this.#dirSync === pending) this.#dirSync = null;
    });
    this.#dirSync = pending;
    // A failure is reported by sync(), which awaits `pending`; this only keeps a log nobody syncs from crashing the process.
    pending.catch(() => undefined);
  }

  /** Sequence number of the last record written (0 when empty). */
  get lastSeq(): number {
    return this.#seq;
  }

  /** Lines skipped by reads because they did not parse. */
  get malformedLines(): number {
    return this.#malformed;
  }

  /** Writes one record with one write(2) call and returns it; durability follows at the next group commit. */
  write(entry: LogEntry): LogRecord {
    if (this.#closed) throw new Error(`log ${this.path} is closed`);
    const record = { ...entry, v: 1, seq: this.#seq + 1, ts: this.#now() } as LogRecord;
    const line = Buffer.from(`${JSON.stringify(record)}\n`, 'utf8');
    let offset = 0;
    while (offset < line.length) offset += writeSync(this.#fd, line, offset, line.length - offset);
    this.#seq = record.seq;
    this.#written += 1;
    return record;
  }

  /** Writes a record and resolves once it is on disk (fdatasync'd). */
  async append(entry: LogEntry): Promise<LogRecord> {
    const record = this.write(entry);
    await this.sync();
    return record;
  }

  /** Resolves when every record written so far has been fdatasync'd. */
  sync(): Promise<void> {
    const dir = this.#dirSync;
    const data =
      this.#synced >= this.#written
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            this.#waiters.push({ upTo: this.#written, resolve, reject });
            this.#schedule();
          });
    return dir ? Promise.all([dir, data]).then(() => undefined) : data;
  }

  #schedule(): void {
    if (this.#syncing || this.#timer) return;
    this.#timer = this.#timers.after(this.#batchMs, () => this.#flush());
  }

  #flush(): void {
    this.#timer = null;
    if (this.#closed) return;
    const target = this.#written;
    this.#syncing = true;
    fdatasync(this.#fd, (error) => {
      this.#syncing = false;
      if (error) {
        const failed = this.#waiters.filter((w) => w.upTo <= target);
        this.#waiters = this.#waiters.filter((w) => w.upTo > target);
        for (const waiter of failed) waiter.reject(error);
      } else {
        this.#synced = Math.max(this.#synced, target);
        const done = this.#waiters.filter((w) => w.upTo <= this.#synced);
        this.#waiters = this.#waiters.filter((w) => w.upTo > this.#synced);
        for (const waiter of done) waiter.resolve();
      }
      if (this.#waiters.length > 0) this.#schedule();
    });
  }

  /** Returns every record with `seq >= fromSeq`, in order; malformed lines are skipped and counted. */
  readFrom(fromSeq = 1): LogRecord[] {
    const out: LogRecord[] = [];
    const text = readAll(this.#fd).toString('utf8');
    for (const line of text.split('\n')) {
      if (line.length === 0) continue;
      const record = parseLine(line);
      if (!record) {
        this.#malformed += 1;
        continue;
      }
      if (record.seq >= fromSeq) out.push(record);
    }
    return out;
  }

  /** Closes the file at once without syncing (for a log about to be deleted); pending sync waiters resolve. */
  discard(): void {
    if (this.#closed) return;
    this.#timer?.cancel();
    this.#closed = true;
    for (const waiter of this.#waiters) waiter.resolve();
    this.#waiters = [];
    closeSync(this.#fd);
  }

  /** Syncs what is pending, then closes the file. */
  async close(): Promise<void> {
    if (this.#closed) return;
    await this.sync();
    this.#timer?.cancel();
    this.#closed = true;
    closeSync(this.#fd);
  }
}
