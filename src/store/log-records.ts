// The `log_records` table: on PostgreSQL every record of the coding sessions' and the engine's JSONL logs is written
// through to it, so any node of the cluster reads a session's output (and follows it live through NOTIFY), and the node
// taking the engine over rebuilds the engine's logs from it. The write path keeps the logs' synchronous `write`: the
// RecordMirror queues each record and commits the queue in groups (one statement per group, in one transaction with a
// NOTIFY per log), and its `sync()` resolves once everything queued before it is committed.
import { closeSync, fdatasyncSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Kysely, Transaction } from 'kysely';
import { sql } from 'kysely';
import type { Clock, Timer } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import { openPrivate } from '../core/private-files.ts';
import type { WriteFence } from './cluster-fence.ts';
import { isFenced } from './cluster-fence.ts';
import type { LogRecord } from './jsonl-log.ts';
import { fsyncDirectory, parseLine } from './jsonl-log.ts';
import type { Database } from './tables/index.ts';

/** Which logs a record belongs to: a coding session's or an engine session's. */
export type RecordKind = 'session' | 'engine';

/** The NOTIFY channel of new records; the payload is `kind|log|seq` (the newest seq the commit wrote to that log). */
export const RECORDS_CHANNEL = 'switchboard_records';

/** One record of one log. */
export interface LogRecordRow {
  kind: RecordKind;
  log: string;
  record: LogRecord;
}

/** A change queued for the table: records to write, or a log to delete (its file was removed). */
export type RecordChange = ({ op: 'write' } & LogRecordRow) | { op: 'remove'; kind: RecordKind; log: string };

/** Parses a NOTIFY payload of RECORDS_CHANNEL; null when malformed. */
export function parseRecordNotice(payload: string): { kind: RecordKind; log: string; seq: number } | null {
  const [kind, log, seq] = payload.split('|');
  if ((kind !== 'session' && kind !== 'engine') || !log || !seq || !/^\d+$/.test(seq)) return null;
  return { kind, log, seq: Number(seq) };
}

const CHUNK = 500;

/**
 * Writes `records` as the JSONL log file at `path` (0600), durably replacing what was there: a temporary file,
 * fdatasync'd, renamed over, then the directory fsync'd. The file must not be open in a JsonlLog meanwhile.
 */
export function replaceLogFile(path: string, records: readonly LogRecord[]): void {
  const temporary = `${path}.rebuild`;
  const fd = openPrivate(temporary, 'w');
  try {
    const bytes = Buffer.from(records.map((r) => `${JSON.stringify(r)}\n`).join(''), 'utf8');
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
  fsyncDirectory(dirname(path));
}

/** Reads and writes `log_records`. */
export class LogRecordStore {
  readonly #db: Kysely<Database>;
  readonly #notify: boolean;
  readonly #fence: WriteFence | null;

  /**
   * `notify`: send NOTIFY on RECORDS_CHANNEL with each commit (PostgreSQL only). `fence`: checked first in each
   * `apply` transaction (the engine's records commit only while this node holds `primary`: store/cluster-fence.ts).
   */
  constructor(db: Kysely<Database>, options: { notify: boolean; fence?: WriteFence }) {
    this.#db = db;
    this.#notify = options.notify;
    this.#fence = options.fence ?? null;
  }

  /**
   * Applies `changes` in order in one transaction: records are upserted (a seq written again after a crash cut the
   * file's torn tail takes the file's new record), removals delete a log's records. One NOTIFY per log written.
   */
  async apply(changes: readonly RecordChange[]): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await this.#fence?.(trx);
      const newest = new Map<string, number>();
      let batch: LogRecordRow[] = [];
      const flush = async (): Promise<void> => {
        for (let i = 0; i < batch.length; i += CHUNK) await insertRows(trx, batch.slice(i, i + CHUNK));
        batch = [];
      };
      for (const change of changes) {
        if (change.op === 'write') {
          batch.push(change);
          const key = `${change.kind}|${change.log}`;
          newest.set(key, Math.max(newest.get(key) ?? 0, change.record.seq));
          continue;
        }
        await flush();
        await trx.deleteFrom('log_records').where('kind', '=', change.kind).where('log', '=', change.log).execute();
      }
      await flush();
      if (!this.#notify) return;
      for (const [key, seq] of newest) await sql`SELECT pg_notify(${RECORDS_CHANNEL}, ${`${key}|${seq}`})`.execute(trx);
    });
  }

  /** The records of one log with `seq >= fromSeq`, in order. */
  async read(kind: RecordKind, log: string, fromSeq = 1): Promise<LogRecord[]> {
    const rows = await this.#db
      .selectFrom('log_records')
      .select('record')
      .where('kind', '=', kind)
      .where('log', '=', log)
      .where('seq', '>=', fromSeq)
      .orderBy('seq')
      .execute();
    return rows.map((r) => parseLine(r.record)).filter((r): r is LogRecord => r !== null);
  }

  /** The newest seq of a log (0 when it has no record). */
  async lastSeq(kind: RecordKind, log: string): Promise<number> {
    const row = await this.#db
      .selectFrom('log_records')
      .select((eb) => eb.fn.max('seq').as('seq'))
      .where('kind', '=', kind)
      .where('log', '=', log)
      .executeTakeFirst();
    return Number(row?.seq ?? 0);
  }

  /** Ids of every log of a kind with at least one record, sorted. */
  async logs(kind: RecordKind): Promise<string[]> {
    const rows = await this.#db
      .selectFrom('log_records')
      .select('log')
      .distinct()
      .where('kind', '=', kind)
      .orderBy('log')
      .execute();
    return rows.map((r) => r.log);
  }
}

async function insertRows(trx: Transaction<Database>, rows: readonly LogRecordRow[]): Promise<void> {
  if (rows.length === 0) return;
  await trx
    .insertInto('log_records')
    .values(
      rows.map((r) => ({
        kind: r.kind,
        log: r.log,
        seq: r.record.seq,
        ts: r.record.ts,
        record: JSON.stringify(r.record),
      })),
    )
    .onConflict((oc) =>
      oc
        .columns(['kind', 'log', 'seq'])
        .doUpdateSet((eb) => ({ ts: eb.ref('excluded.ts'), record: eb.ref('excluded.record') })),
    )
    .execute();
}

interface Waiter {
  upTo: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

/** How a RecordMirror is built. */
export interface RecordMirrorOptions {
  store: LogRecordStore;
  logger: Logger;
  /** Times the retry after a failed commit. */
  clock: Pick<Clock, 'after'>;
  /** Wait before trying a failed commit again. */
  retryMs: number;
  /** Most changes committed in one transaction. */
  maxBatch?: number;
}

/**
 * The write-through queue of the logs: `write`/`remove` queue a change synchronously and a single flusher commits the
 * queue in groups, in order, as soon as it can. `sync()` resolves once every change queued before the call is
 * committed, and rejects when the commit of one of them failed (the change stays queued; it is tried again after
 * `retryMs`, and a later `sync()` waits for that).
 */
export class RecordMirror {
  readonly #o: RecordMirrorOptions;
  #queue: RecordChange[] = [];
  /** Changes ever queued, and ever committed (a change's number is its place in that count). */
  #queued = 0;
  #committed = 0;
  #waiters: Waiter[] = [];
  #flushing: Promise<void> | null = null;
  #retry: Timer | null = null;
  #closed = false;
  /** Set once the store's fence refused a commit: this node lost the lease, nothing queued may ever be committed. */
  #fenced: Error | null = null;

  constructor(options: RecordMirrorOptions) {
    this.#o = options;
  }

  /** Queues one record of a log. */
  write(kind: RecordKind, log: string, record: LogRecord): void {
    this.#push({ op: 'write', kind, log, record });
  }

  /** Queues the removal of a log's records. */
  remove(kind: RecordKind, log: string): void {
    this.#push({ op: 'remove', kind, log });
  }

  #push(change: RecordChange): void {
    if (this.#fenced) return;
    this.#queue.push(change);
    this.#queued += 1;
    this.#schedule();
  }

  /** Resolves once every change queued so far is committed. */
  sync(): Promise<void> {
    if (this.#fenced) return Promise.reject(this.#fenced);
    if (this.#committed >= this.#queued) return Promise.resolve();
    const done = new Promise<void>((resolve, reject) => this.#waiters.push({ upTo: this.#queued, resolve, reject }));
    this.#schedule();
    return done;
  }

  /**
   * After a refused commit: this node holds the lease again (it rejoined the cluster, took the lease under a fresh
   * incarnation and rebuilt its logs from the table), so changes queued from now on are committed again. What was
   * dropped stays dropped. A no-op unless fenced.
   */
  unfence(): void {
    this.#fenced = null;
  }

  /** Commits what is queued (waiting out a pending retry) and stops retrying; rejects when that commit fails. */
  async close(): Promise<void> {
    if (this.#fenced) {
      this.#closed = true;
      return;
    }
    this.#retry?.cancel();
    this.#retry = null;
    await this.sync();
    this.#closed = true;
  }

  #schedule(): void {
    if (this.#flushing || this.#retry || this.#closed || this.#queue.length === 0) return;
    this.#flushing = this.#flush().finally(() => {
      this.#flushing = null;
      this.#schedule();
    });
  }

  async #flush(): Promise<void> {
    // Let the writes of this turn of the event loop join the group.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.#queue.length > 0) {
      const batch = this.#queue.slice(0, this.#o.maxBatch ?? 2000);
      try {
        await this.#o.store.apply(batch);
      } catch (error) {
        if (isFenced(error)) {
          this.#refuseAll(error);
          return;
        }
        const end = this.#committed + batch.length;
        const failed = this.#waiters.filter((w) => w.upTo <= end);
        this.#waiters = this.#waiters.filter((w) => w.upTo > end);
        this.#o.logger.error({ err: error, changes: batch.length }, 'log records could not be written to the database');
        const reason = error instanceof Error ? error : new Error(String(error));
        for (const waiter of failed) waiter.reject(reason);
        this.#retry = this.#o.clock.after(this.#o.retryMs, () => {
          this.#retry = null;
          this.#schedule();
        });
        return;
      }
      this.#queue.splice(0, batch.length);
      this.#committed += batch.length;
      const done = this.#waiters.filter((w) => w.upTo <= this.#committed);
      this.#waiters = this.#waiters.filter((w) => w.upTo > this.#committed);
      for (const waiter of done) waiter.resolve();
    }
  }

  /**
   * The fence refused a commit: another node holds the lease and rebuilt from the table, so what this node still holds
   * queued (and anything it writes later) is dropped, never retried: committed late it would overwrite the new holder's
   * records of the same seq. Every waiting and later `sync()` rejects with `error`.
   */
  #refuseAll(error: Error): void {
    this.#fenced = error;
    this.#o.logger.error(
      { err: error, changes: this.#queue.length },
      'this node lost the lease guarding these records: they are dropped (another node serves them)',
    );
    this.#queue = [];
    // Dropped, never to be committed: a `sync` after an `unfence` waits only for what is queued then.
    this.#queued = this.#committed;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) waiter.reject(error);
  }
}
