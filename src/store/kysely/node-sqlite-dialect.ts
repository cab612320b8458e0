import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import type {
  DatabaseConnection,
  DatabaseIntrospector,
  Dialect,
  DialectAdapter,
  Driver,
  Kysely,
  QueryCompiler,
  QueryResult,
} from 'kysely';
import { CompiledQuery, SelectQueryNode, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import { DEFAULT_AUTOCHECKPOINT_PAGES, FALLBACK_AUTOCHECKPOINT_PAGES, WalCheckpointer } from './wal-checkpointer.ts';
import { WalSync } from './wal-sync.ts';

/** How many prepared statements one connection keeps (the store's query shapes; far fewer in practice). */
const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely's SQLite dialect over Node's own synchronous `node:sqlite` connection (Kysely ships one for better-sqlite3
 * only). The connection is the daemon's one `DatabaseSync`, opened and migrated by `openDatabase`; the dialect never
 * closes it (its owner does). Statements are prepared once per SQL text, transactions begin IMMEDIATE (the write lock is
 * taken at BEGIN), and booleans bind as 1/0 (SQLite has no boolean type).
 *
 * A file in WAL mode opened with `synchronous = FULL` (or EXTRA) keeps that guarantee with the sync moved off the event
 * loop when the disk is slow: the connection runs at NORMAL (a commit writes the WAL, no sync), and a statement that
 * commits (COMMIT, or a write outside a transaction) resolves only after an fdatasync of the WAL (`WalSync`: at once on
 * a fast disk; on a slow one a group fdatasync in the thread pool, shared by every commit made meanwhile). The
 * connection passes to the next operation as soon as the statement ran, and the committing operation resolves once its
 * sync is done (the driver's lease; an operation holding the connection for several statements resolves after the
 * sync of the last it committed). Nothing is acknowledged before it is on disk, as with FULL, and the loop serves other
 * requests while a slow disk syncs. `PRAGMA synchronous` read or set through Kysely is the level the dialect keeps (a
 * transaction run at NORMAL resolves without waiting for the sync, as SQLite's NORMAL would).
 */
export class NodeSqliteDialect implements Dialect {
  readonly #db: DatabaseSync;
  readonly #options: NodeSqliteDialectOptions;

  /**
   * `db` stays owned by the caller: destroying the Kysely instance does not close it.
   */
  constructor(db: DatabaseSync, options: NodeSqliteDialectOptions = {}) {
    this.#db = db;
    this.#options = options;
  }

  createDriver(): Driver {
    return new NodeSqliteDriver(this.#db, this.#options);
  }

  createQueryCompiler(): QueryCompiler {
    return new SqliteQueryCompiler();
  }

  createAdapter(): DialectAdapter {
    return new NodeSqliteAdapter();
  }

  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new SqliteIntrospector(db);
  }
}

/** Test seams of the dialect. */
export interface NodeSqliteDialectOptions {
  /** Replaces one round's sync of the WAL (see WalSync). */
  syncOnce?: () => Promise<void>;
}

/**
 * SQLite's adapter, saying "several connections" only so that Kysely leaves the locking of the one connection to the
 * driver (which releases it before a commit's sync is waited for).
 */
class NodeSqliteAdapter extends SqliteAdapter {
  override get supportsMultipleConnections(): boolean {
    return true;
  }
}

/**
 * The one connection, lent to one Kysely operation at a time (a query, or a transaction from BEGIN to COMMIT) in the
 * order they asked. When a lease committed (see NodeSqliteConnection), the next lease starts at once and this one's
 * `releaseConnection` resolves after its WAL sync: Kysely resolves the operation only then, and writes that commit while
 * a sync is in flight share the next one.
 */
class NodeSqliteDriver implements Driver {
  readonly #connection: NodeSqliteConnection;
  #leased = false;
  #waiting: (() => void)[] = [];

  constructor(db: DatabaseSync, options: NodeSqliteDialectOptions) {
    this.#connection = new NodeSqliteConnection(db, options);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    if (this.#leased) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#leased = true;
    return this.#connection;
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('BEGIN IMMEDIATE'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('COMMIT'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('ROLLBACK'));
  }

  async releaseConnection(): Promise<void> {
    const synced = this.#connection.takeSync();
    const next = this.#waiting.shift();
    // The lease passes straight to the next in line (never free in between, so no one can overtake it).
    if (next) next();
    else this.#leased = false;
    await synced;
  }

  async destroy(): Promise<void> {}
}

/**
 * A prepared statement, whether it returns rows (a SELECT, or a write with RETURNING), and whether it may write (all but
 * SELECT, BEGIN, ROLLBACK and PRAGMA: run outside a transaction, it commits), all known once.
 */
interface Prepared {
  statement: StatementSync;
  reader: boolean;
  writes: boolean;
}

/**
 * How the connection's commits reach the disk: as SQLite is configured (in memory, not WAL, or below FULL), or with the
 * dialect's sync off the loop at the declared `synchronous` level (see NodeSqliteDialect).
 */
type Durability = { kind: 'sqlite' } | { kind: 'wal-sync'; wal: WalSync; checkpointer: WalCheckpointer; level: number };

/** `PRAGMA synchronous` and `PRAGMA synchronous = <level>` (the level's text), as Kysely sends them. */
const SYNCHRONOUS_PRAGMA = /^\s*pragma\s+(?:main\.)?synchronous\s*(?:=\s*'?(\w+)'?)?\s*;?\s*$/i;

/** SQLite's synchronous levels by name. */
const SYNCHRONOUS_LEVELS: Readonly<Record<string, number>> = { off: 0, normal: 1, full: 2, extra: 3 };

/** The level `value` names (0–3 or its name); undefined for anything else. */
function synchronousLevel(value: string): number | undefined {
  const level = /^\d+$/.test(value) ? Number(value) : SYNCHRONOUS_LEVELS[value.toLowerCase()];
  return level !== undefined && level >= 0 && level <= 3 ? level : undefined;
}

/** Ends the checkpoint thread of a connection collected without a commit after its close (which would have ended it). */
const closeCollected = new FinalizationRegistry<WalCheckpointer>((checkpointer) => checkpointer.close());

/**
 * How `db` commits: with the WAL sync off the loop when it is a file in WAL mode at FULL or above (the connection is then
 * set to NORMAL and the dialect syncs), as SQLite does otherwise.
 */
function durabilityOf(db: DatabaseSync, options: NodeSqliteDialectOptions): Durability {
  const file = db.location();
  if (!file) return { kind: 'sqlite' };
  const mode = db.prepare('PRAGMA journal_mode').get() as { journal_mode?: string } | undefined;
  const level = Number((db.prepare('PRAGMA synchronous').get() as { synchronous?: number } | undefined)?.synchronous);
  if (mode?.journal_mode?.toLowerCase() !== 'wal' || !(level >= 2)) return { kind: 'sqlite' };
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec(`PRAGMA wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
  // Held weakly: the checkpoint thread's listeners must not keep a database its owner dropped (see `closeCollected`).
  const ref = new WeakRef(db);
  const isOpen = () => ref.deref()?.isOpen ?? false;
  const checkpointer = new WalCheckpointer(file, isOpen, (error) => {
    // SQLite checkpoints in the commits again, as without the thread; the failure is reported, not hidden.
    const open = ref.deref();
    if (open?.isOpen) open.exec(`PRAGMA wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`);
    process.emitWarning(
      `switchboard: the WAL checkpoint thread failed (${String(error)}); SQLite checkpoints in commits`,
    );
  });
  closeCollected.register(db, checkpointer);
  return { kind: 'wal-sync', wal: new WalSync(`${file}-wal`, isOpen, options.syncOnce), checkpointer, level };
}

class NodeSqliteConnection implements DatabaseConnection {
  readonly #db: DatabaseSync;
  readonly #statements = new Map<string, Prepared>();
  readonly #options: NodeSqliteDialectOptions;
  #durability: Durability | undefined;
  #sync: Promise<void> | undefined;

  constructor(db: DatabaseSync, options: NodeSqliteDialectOptions) {
    this.#db = db;
    this.#options = options;
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    // Decided at the first query (after openDatabase set the pragmas and migrated: those run at the level it set).
    const durability = (this.#durability ??= durabilityOf(this.#db, this.#options));
    if (durability.kind === 'sqlite') return runPrepared<R>(this.#prepared(compiled), compiled);
    const pragma = SYNCHRONOUS_PRAGMA.exec(compiled.sql);
    if (pragma) return synchronousPragma<R>(durability, pragma[1]);
    const prepared = this.#prepared(compiled);
    const result = runPrepared<R>(prepared, compiled);
    if (!prepared.writes || this.#db.isTransaction) return result;
    durability.checkpointer.committed();
    // Committed by this statement: the lease ends after the sync (a later round covers the earlier ones).
    if (durability.level >= 2) {
      const synced = durability.wal.sync();
      if (synced) this.#sync = synced;
    }
    return result;
  }

  /** The sync the current lease's commits wait for (undefined when it committed nothing); the next lease starts clean. */
  takeSync(): Promise<void> | undefined {
    const synced = this.#sync;
    this.#sync = undefined;
    return synced;
  }

  /** Not offered: every store reads bounded pages. */
  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('node:sqlite dialect: streaming queries are not supported; read a bounded page instead');
  }

  #prepared(compiled: CompiledQuery): Prepared {
    let prepared = this.#statements.get(compiled.sql);
    if (prepared) return prepared;
    prepared = prepare(this.#db, compiled);
    if (this.#statements.size >= STATEMENT_CACHE_SIZE) {
      const oldest = this.#statements.keys().next();
      if (!oldest.done) this.#statements.delete(oldest.value);
    }
    this.#statements.set(compiled.sql, prepared);
    return prepared;
  }
}

/**
 * Prepares and runs one compiled query on `db`: rows for a statement that returns columns (a SELECT, or a write with
 * RETURNING), the change count and last row id otherwise. Synchronous, so the migration runner uses it to apply
 * Kysely-built DDL before the daemon starts.
 */
export function runCompiled<R>(db: DatabaseSync, compiled: CompiledQuery): QueryResult<R> {
  return runPrepared<R>(prepare(db, compiled), compiled);
}

/** Reads or sets the level the dialect keeps (`value`: the level set, or undefined to read it). */
function synchronousPragma<R>(
  durability: Durability & { kind: 'wal-sync' },
  value: string | undefined,
): QueryResult<R> {
  if (value === undefined) return { rows: [{ synchronous: durability.level } as R] };
  const level = synchronousLevel(value);
  if (level === undefined) throw new Error(`node:sqlite dialect: unknown synchronous level ${value}`);
  durability.level = level;
  return { rows: [] };
}

/** Prepares `compiled.sql` on `db` and finds out, once, whether it returns rows and whether it may write. */
function prepare(db: DatabaseSync, compiled: CompiledQuery): Prepared {
  const statement = db.prepare(compiled.sql);
  const reader =
    typeof statement.columns === 'function'
      ? statement.columns().length > 0
      : SelectQueryNode.is(compiled.query) || /\breturning\b/i.test(compiled.sql);
  return { statement, reader, writes: !/^\s*(?:select|begin|rollback|pragma)\b/i.test(compiled.sql) };
}

/** Runs `compiled`'s parameters through its prepared statement. */
function runPrepared<R>({ statement, reader }: Prepared, compiled: CompiledQuery): QueryResult<R> {
  const parameters = compiled.parameters.map(bindable);
  if (reader) return { rows: statement.all(...parameters) as R[] };
  const { changes, lastInsertRowid } = statement.run(...parameters);
  return { rows: [], numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid) };
}

function bindable(value: unknown): SQLInputValue {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value === undefined) return null;
  if (value === null || typeof value === 'number' || typeof value === 'bigint' || typeof value === 'string')
    return value;
  if (value instanceof Uint8Array) return value;
  throw new TypeError(`node:sqlite dialect: cannot bind a ${typeof value} parameter`);
}
