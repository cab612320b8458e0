// The one SQLite connection, lent to one Kysely user at a time. Kysely's own lock (for a dialect that cannot have more
// than one connection) holds the connection until the user is done with it, and a transaction's user is done only
// once its commit has resolved — which here waits for the WAL's sync (wal-sync.ts). This lock is released as soon as
// the COMMIT has run instead, so the next transaction can begin while the previous one waits for the disk.
import type { CompiledQuery, DatabaseConnection, QueryResult } from 'kysely';

/** A connection that can be lent: it runs a query, calling `committed` right after a COMMIT it ran succeeded. */
export interface LendableConnection {
  executeQuery<R>(compiled: CompiledQuery, committed: () => void): Promise<QueryResult<R>>;
}

/** A first-come first-served lock. */
export class ConnectionLock {
  #held = false;
  readonly #waiting: (() => void)[] = [];

  /** Resolves once the lock is this caller's. */
  async acquire(): Promise<void> {
    if (!this.#held) {
      this.#held = true;
      return;
    }
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  /** Hands the lock to the next waiter, or frees it. */
  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#held = false;
  }
}

/**
 * One lending of the connection, from Kysely's acquire to its release, or to the end of the COMMIT run through it,
 * whichever comes first. A query sent through a lease that has ended is refused.
 */
export class ConnectionLease implements DatabaseConnection {
  readonly #connection: LendableConnection;
  readonly #lock: ConnectionLock;
  #ended = false;

  /** A lease on `connection`, whose `lock` the caller holds already. */
  constructor(connection: LendableConnection, lock: ConnectionLock) {
    this.#connection = connection;
    this.#lock = lock;
  }

  executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    if (this.#ended)
      return Promise.reject(new Error('node:sqlite dialect: a query was sent after its transaction ended'));
    return this.#connection.executeQuery<R>(compiled, () => this.end());
  }

  /** Not offered: every store reads bounded pages. */
  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('node:sqlite dialect: streaming queries are not supported; read a bounded page instead');
  }

  /** Ends the lease (once): the lock goes to the next user. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#lock.release();
  }
}
