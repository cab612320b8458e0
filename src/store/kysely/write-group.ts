// Group commit for SQLite's writes that run outside an explicit transaction. Each such write runs at once, inside a
// transaction the group opens for it (or the one already open), and its caller is answered only after that
// transaction commits: at the end of the current turn of the event loop, together with every other write of the turn.
// So N writes issued by N sessions in one turn cost one commit (one fsync) instead of N, and nothing is acknowledged
// before it is committed. The statement's result is known at once; Kysely hands it back to the caller through
// `WriteGroupPlugin`, which waits for the commit first, after the connection's lock was released, so that the next
// write of the turn can join the group. A read run while a group is open sees that group's writes (one connection), so
// its answer waits for the same commit: nobody is shown a row a crash could still take back.
import type { DatabaseSync } from 'node:sqlite';
import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryId,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';

/** More writes than this in one turn commit at once, and the next write opens a new group. */
const MAX_GROUP = 512;

/** One open group: its transaction's writes and the promise they are answered by. */
interface Round {
  committed: Promise<void>;
  resolve: () => void;
  reject: (error: Error) => void;
  writes: number;
}

/** The writes of one SQLite connection that share a commit; see the file comment. */
export class WriteGroup {
  readonly #db: DatabaseSync;
  #open: Round | null = null;
  /** Per query id, the commits its writes wait for, oldest first (one query object may be run more than once). */
  readonly #waits = new WeakMap<QueryId, Promise<void>[]>();

  /** `db`: the connection whose autocommit writes are grouped (its only user must be this group's dialect). */
  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /**
   * Runs `run` (one write statement) inside the open group's transaction, opening one if none is open, and returns
   * its result at once; the answer to `queryId` waits for the group's commit (`committed`). A statement that fails
   * commits the group at once (SQLite may have rolled the whole transaction back: then its other writes fail too)
   * and throws.
   */
  write<T>(queryId: QueryId, run: () => T): T {
    const round = this.#open ?? this.#begin();
    let result: T;
    try {
      result = run();
    } catch (error) {
      this.#commit(round);
      throw error;
    }
    round.writes += 1;
    this.#answerAfter(queryId, round);
    if (round.writes >= MAX_GROUP) this.#commit(round);
    return result;
  }

  /**
   * Runs `run` (a read) at once and returns its result; when a group is open (never inside an explicit transaction:
   * BEGIN commits it) the read may have seen its uncommitted writes, so the answer to `queryId` waits for that group's
   * commit (and fails if the commit fails: what it saw is gone).
   */
  read<T>(queryId: QueryId, run: () => T): T {
    const result = run();
    if (this.#open) this.#answerAfter(queryId, this.#open);
    return result;
  }

  /** Commits the open group now, if there is one: before an explicit transaction, a pragma, or closing the database. */
  commitNow(): void {
    if (this.#open) this.#commit(this.#open);
  }

  /** The commit the oldest unanswered statement of `queryId` waits for (handed out once), or undefined if none does. */
  committed(queryId: QueryId): Promise<void> | undefined {
    const waits = this.#waits.get(queryId);
    const committed = waits?.shift();
    if (waits?.length === 0) this.#waits.delete(queryId);
    return committed;
  }

  /** Makes the next answer to `queryId` wait for `round`'s commit. */
  #answerAfter(queryId: QueryId, round: Round): void {
    const waits = this.#waits.get(queryId);
    if (waits) waits.push(round.committed);
    else this.#waits.set(queryId, [round.committed]);
  }

  #begin(): Round {
    this.#db.exec('BEGIN IMMEDIATE');
    let resolve!: () => void;
    let reject!: (error: Error) => void;
    const committed = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // Every write of the round awaits `committed` through the plugin; this only keeps a failure that reaches no
    // caller (all of them gone) from ending the process as an unhandled rejection.
    committed.catch(() => undefined);
    const round: Round = { committed, resolve, reject, writes: 0 };
    this.#open = round;
    setImmediate(() => {
      if (this.#open === round) this.#commit(round);
    });
    return round;
  }

  #commit(round: Round): void {
    this.#open = null;
    try {
      this.#db.exec('COMMIT');
      round.resolve();
    } catch (error) {
      round.reject(this.#rollback(error instanceof Error ? error : new Error(String(error))));
    }
  }

  /** Rolls back what a failed COMMIT left open (SQLite may already have); returns the error the writes fail with. */
  #rollback(error: Error): Error {
    if (this.#db.isTransaction === false) return error;
    try {
      this.#db.exec('ROLLBACK');
      return error;
    } catch (rollbackError) {
      return new AggregateError([error, rollbackError], `${error.message}; the rollback failed too`);
    }
  }
}

/**
 * The Kysely plugin that answers a grouped write, and a read that ran while a group was open, only once that group has
 * committed: Kysely runs `transformResult` after releasing the connection, so other writes run (and join the group)
 * meanwhile.
 */
export class WriteGroupPlugin implements KyselyPlugin {
  readonly #group: WriteGroup;

  /** `group`: the write group of the connection this plugin's Kysely instance uses. */
  constructor(group: WriteGroup) {
    this.#group = group;
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const committed = this.#group.committed(args.queryId);
    if (committed) await committed;
    return args.result;
  }
}
