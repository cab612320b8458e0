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
import {
  CompiledQuery,
  RawNode,
  SelectQueryNode,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import type { WriteGroup } from './write-group.ts';

/** How many prepared statements one connection keeps (the store's query shapes; far fewer in practice). */
const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely's SQLite dialect over Node's own synchronous `node:sqlite` connection (Kysely ships one for better-sqlite3
 * only). The connection is the daemon's one `DatabaseSync`, opened and migrated by `openDatabase`; the dialect never
 * closes it (its owner does). Statements are prepared once per SQL text, transactions begin IMMEDIATE (the write lock is
 * taken at BEGIN), booleans bind as 1/0 (SQLite has no boolean type), and a write outside an explicit transaction
 * joins the connection's write group (one commit per turn of the event loop, see write-group.ts); a read is answered
 * after the open group's commit, if one is open.
 */
export class NodeSqliteDialect implements Dialect {
  readonly #db: DatabaseSync;
  readonly #group: WriteGroup;

  /**
   * `db` stays owned by the caller: destroying the Kysely instance does not close it. `group` is `db`'s write group;
   * the Kysely instance must carry its `WriteGroupPlugin`, which answers a grouped write once it has committed.
   */
  constructor(db: DatabaseSync, group: WriteGroup) {
    this.#db = db;
    this.#group = group;
  }

  createDriver(): Driver {
    return new NodeSqliteDriver(this.#db, this.#group);
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

  constructor(db: DatabaseSync, group: WriteGroup) {
    this.#connection = new NodeSqliteConnection(db, group);
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

/**
 * What a statement does to the connection's transactions: `read` nothing; `write` changes data (grouped outside an
 * explicit transaction); `begin`, `commit` and `rollback` open and close an explicit one; `session` must run outside
 * any group (a pragma: `synchronous` cannot change inside a transaction).
 */
type StatementRole = 'read' | 'write' | 'begin' | 'commit' | 'rollback' | 'session';

/** A prepared statement and whether it returns rows (a SELECT, or a write with RETURNING), both known once. */
interface PreparedStatement {
  statement: StatementSync;
  reader: boolean;
}

/** A connection's prepared statement with its role, known once. */
interface Prepared extends PreparedStatement {
  role: StatementRole;
}

class NodeSqliteConnection implements DatabaseConnection {
  readonly #db: DatabaseSync;
  readonly #group: WriteGroup;
  readonly #statements = new Map<string, Prepared>();
  /** An explicit transaction (Kysely's, between `begin` and `end`) is open: its writes are not grouped. */
  #inTransaction = false;

  constructor(db: DatabaseSync, group: WriteGroup) {
    this.#db = db;
    this.#group = group;
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const cached = this.#statements.get(compiled.sql);
    const role = cached?.role ?? roleOf(compiled);
    // A pragma is evaluated as it is prepared, and must not run inside the group's transaction; BEGIN must not either.
    if (role === 'begin' || (role === 'session' && !this.#inTransaction)) this.#group.commitNow();
    const prepared = cached ?? this.#prepare(compiled, role);
    switch (prepared.role) {
      case 'read':
        // Inside an explicit transaction no group is open (BEGIN committed it), so the read waits for nothing.
        return this.#group.read(compiled.queryId, () => runPrepared<R>(prepared, compiled));
      case 'session':
        return runPrepared<R>(prepared, compiled);
      case 'write':
        if (this.#inTransaction) return runPrepared<R>(prepared, compiled);
        return this.#group.write(compiled.queryId, () => runPrepared<R>(prepared, compiled));
      case 'begin':
      case 'commit': {
        // A failed BEGIN opened nothing; a failed COMMIT leaves the transaction open (Kysely rolls it back next).
        const result = runPrepared<R>(prepared, compiled);
        this.#inTransaction = prepared.role === 'begin';
        return result;
      }
      case 'rollback':
        this.#inTransaction = false;
        return runPrepared<R>(prepared, compiled);
    }
  }

  /** Not offered: every store reads bounded pages. */
  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('node:sqlite dialect: streaming queries are not supported; read a bounded page instead');
  }

  #prepare(compiled: CompiledQuery, role: StatementRole): Prepared {
    const prepared = { ...prepare(this.#db, compiled), role };
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
function prepare(db: DatabaseSync, compiled: CompiledQuery): PreparedStatement {
  const statement = db.prepare(compiled.sql);
  const reader =
    typeof statement.columns === 'function'
      ? statement.columns().length > 0
      : SelectQueryNode.is(compiled.query) || /\breturning\b/i.test(compiled.sql);
  return { statement, reader };
}

/** The role of a compiled statement: from its query node, or for raw SQL from its first keyword. */
function roleOf(compiled: CompiledQuery): StatementRole {
  if (SelectQueryNode.is(compiled.query)) return 'read';
  if (!RawNode.is(compiled.query)) return 'write';
  const sql = compiled.sql.trimStart().toLowerCase();
  if (/^(select|with|explain|values)\b/.test(sql)) return 'read';
  if (/^begin\b/.test(sql)) return 'begin';
  if (/^(commit|end)\b/.test(sql)) return 'commit';
  if (/^rollback\s*(transaction\s*)?;?$/.test(sql.trimEnd())) return 'rollback';
  if (/^(insert|update|delete|replace|create|drop|alter)\b/.test(sql)) return 'write';
  return 'session';
}

/** Runs `compiled`'s parameters through its prepared statement. */
function runPrepared<R>({ statement, reader }: PreparedStatement, compiled: CompiledQuery): QueryResult<R> {
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
