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

/** How many prepared statements one connection keeps (the store's query shapes; far fewer in practice). */
const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely's SQLite dialect over Node's own synchronous `node:sqlite` connection (Kysely ships one for better-sqlite3
 * only). The connection is the daemon's one `DatabaseSync`, opened and migrated by `openDatabase`; the dialect never
 * closes it (its owner does). Statements are prepared once per SQL text, transactions begin IMMEDIATE (the write lock is
 * taken at BEGIN), and booleans bind as 1/0 (SQLite has no boolean type).
 */
export class NodeSqliteDialect implements Dialect {
  readonly #db: DatabaseSync;

  /** `db` stays owned by the caller: destroying the Kysely instance does not close it. */
  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  createDriver(): Driver {
    return new NodeSqliteDriver(this.#db);
  }

  createQueryCompiler(): QueryCompiler {
    return new SqliteQueryCompiler();
  }

  createAdapter(): DialectAdapter {
    return new SqliteAdapter();
  }

  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new SqliteIntrospector(db);
  }
}

class NodeSqliteDriver implements Driver {
  readonly #connection: NodeSqliteConnection;

  constructor(db: DatabaseSync) {
    this.#connection = new NodeSqliteConnection(db);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
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

  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {}
}

/** A prepared statement and whether it returns rows (a SELECT, or a write with RETURNING), both known once. */
interface Prepared {
  statement: StatementSync;
  reader: boolean;
}

class NodeSqliteConnection implements DatabaseConnection {
  readonly #db: DatabaseSync;
  readonly #statements = new Map<string, Prepared>();

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    return runPrepared<R>(this.#prepared(compiled), compiled);
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

/** Prepares `compiled.sql` on `db` and finds out, once, whether it returns rows. */
function prepare(db: DatabaseSync, compiled: CompiledQuery): Prepared {
  const statement = db.prepare(compiled.sql);
  const reader =
    typeof statement.columns === 'function'
      ? statement.columns().length > 0
      : SelectQueryNode.is(compiled.query) || /\breturning\b/i.test(compiled.sql);
  return { statement, reader };
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
