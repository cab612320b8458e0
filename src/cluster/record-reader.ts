// One reader of the coding sessions' logs for every node: a session live in this process is read from its local JSONL
// file (the fastest, and exactly what it wrote); any other (one running or having run on another node, or on a lost
// one) from `log_records` on PostgreSQL, where everything acknowledged was written through. Following a session
// delivers each record once, in order: live records of a local session as they are written, the others when a NOTIFY
// on RECORDS_CHANNEL says its log grew, when the LISTEN connection comes back, and at every poll (notifications are
// only hints). On SQLite (a cluster of one) everything is local.
import type { Clock, Timer } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import type { LogRecord } from '../store/jsonl-log.ts';
import type { LogRecordStore, RecordMirror } from '../store/log-records.ts';
import { parseRecordNotice, RECORDS_CHANNEL } from '../store/log-records.ts';
import type { SessionLogs, SessionRecordSource } from '../store/session-logs.ts';
import type { PgListener } from './pg-listener.ts';

/** How a ClusterRecordReader is built. */
export interface RecordReaderOptions {
  logs: SessionLogs;
  /** True when the session runs in this process (its file here is the one being written). */
  isLocal: (sessionId: string) => boolean;
  /** The database's records, with the mirror writing this node's (PostgreSQL); null on SQLite: everything is local. */
  database: { store: LogRecordStore; mirror: RecordMirror; listener: PgListener | null } | null;
  clock: Clock;
  logger: Logger;
  /** How often followers of sessions read from the database look for new records without a notification. */
  pollMs: number;
}

interface Follower {
  sessionId: string;
  /** The seq of the last record delivered. */
  sent: number;
  listener: (record: LogRecord) => void;
  fetching: boolean;
  again: boolean;
  closed: boolean;
}

/** The SessionRecordSource of a node: local files for live local sessions, the database for the others. */
export class ClusterRecordReader implements SessionRecordSource {
  readonly #o: RecordReaderOptions;
  readonly #followers = new Set<Follower>();
  #poll: Timer | null = null;
  #unlisten: (() => void)[] = [];

  constructor(options: RecordReaderOptions) {
    this.#o = options;
    const listener = options.database?.listener;
    if (listener) {
      this.#unlisten.push(
        listener.on(RECORDS_CHANNEL, (payload) => {
          const notice = parseRecordNotice(payload);
          if (notice?.kind !== 'session') return;
          for (const f of this.#followers) if (f.sessionId === notice.log && notice.seq > f.sent) this.#fetch(f);
        }),
        listener.onConnect(() => {
          for (const f of this.#followers) this.#fetch(f);
        }),
      );
    }
  }

  async read(sessionId: string, fromSeq = 1): Promise<LogRecord[]> {
    const db = this.#o.database;
    if (!db || this.#o.isLocal(sessionId)) return this.#o.logs.read(sessionId, fromSeq);
    // What this node wrote and has not committed yet (a session that just ended here) is committed first.
    await db.mirror.sync();
    return db.store.read('session', sessionId, fromSeq);
  }

  async lastSeq(sessionId: string): Promise<number> {
    const db = this.#o.database;
    if (!db || this.#o.isLocal(sessionId)) return this.#o.logs.lastSeq(sessionId);
    await db.mirror.sync();
    return db.store.lastSeq('session', sessionId);
  }

  follow(sessionId: string, fromSeq: number, listener: (record: LogRecord) => void): () => void {
    const follower: Follower = { sessionId, sent: fromSeq - 1, listener, fetching: false, again: false, closed: false };
    const deliver = (record: LogRecord): void => {
      if (follower.closed || record.seq <= follower.sent) return;
      follower.sent = record.seq;
      listener(record);
    };
    // Live records written in this process: delivered at once when they are the next one, else read back in order.
    const unsubscribe = this.#o.logs.subscribe(sessionId, (record) => {
      if (record.seq === follower.sent + 1) deliver(record);
      else if (record.seq > follower.sent + 1) this.#fetch(follower);
    });
    if (!this.#o.database || this.#o.isLocal(sessionId)) {
      for (const record of this.#o.logs.read(sessionId, fromSeq)) deliver(record);
    }
    if (this.#o.database) {
      this.#followers.add(follower);
      this.#startPolling();
      this.#fetch(follower);
    }
    return () => {
      follower.closed = true;
      unsubscribe();
      this.#followers.delete(follower);
      if (this.#followers.size === 0) this.#stopPolling();
    };
  }

  /** Reads a follower's records after the last it was given (serially: one read at a time, again if asked meanwhile). */
  #fetch(follower: Follower): void {
    if (follower.closed) return;
    if (follower.fetching) {
      follower.again = true;
      return;
    }
    follower.fetching = true;
    void this.read(follower.sessionId, follower.sent + 1)
      .then((records) => {
        for (const record of records) {
          if (follower.closed || record.seq !== follower.sent + 1) break;
          follower.sent = record.seq;
          follower.listener(record);
        }
      })
      .catch((error: unknown) => {
        this.#o.logger.warn({ err: error, session: follower.sessionId }, 'could not read session records; retrying');
      })
      .finally(() => {
        follower.fetching = false;
        if (follower.again) {
          follower.again = false;
          this.#fetch(follower);
        }
      });
  }

  #startPolling(): void {
    if (this.#poll) return;
    this.#poll = this.#o.clock.every(this.#o.pollMs, () => {
      for (const f of this.#followers) if (!this.#o.isLocal(f.sessionId)) this.#fetch(f);
    });
  }

  #stopPolling(): void {
    this.#poll?.cancel();
    this.#poll = null;
  }

  /** Stops every follower's polling and the notifications' subscriptions. */
  close(): void {
    this.#stopPolling();
    for (const unlisten of this.#unlisten.splice(0)) unlisten();
    for (const f of this.#followers) f.closed = true;
    this.#followers.clear();
  }
}
