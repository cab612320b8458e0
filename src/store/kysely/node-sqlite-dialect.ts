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
  DeleteQueryNode,
  InsertQueryNode,
  RawNode,
  SelectQueryNode,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  UpdateQueryNode,
} from 'kysely';
import type { LendableConnection } from './connection-lease.ts';
import { ConnectionLease, ConnectionLock } from './connection-lease.ts';
import type { WalSync } from './wal-sync.ts';
import type { WriteGroup } from './write-group.ts';

/** How many prepared statements one connection keeps (the store's query shapes; far fewer in practice). */
const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely's SQLite dialect over Node's own synchronous `node:sqlite` connection (Kysely ships one for better-sqlite3
 * only). The connection is the daemon's one `DatabaseSync`, opened and migrated by `openDatabase`; the dialect never
 * closes it (its owner does). Statements are prepared once per SQL text, transactions begin IMMEDIATE (the write lock is
 * taken at BEGIN), booleans bind as 1/0 (SQLite has no boolean type), and a write outside an explicit transaction
 * joins the connection's write group (one commit per turn of the event loop, see write-group.ts). A transaction's
 * commit resolves once it is synced to disk (wal-sync.ts) — unless the transaction ran `PRAGMA synchronous = NORMAL`
 * (or OFF) first: SQLite refuses to change that setting inside a transaction, so here it means what PostgreSQL's
 * `SET LOCAL synchronous_commit = off` does, for that transaction only (its commit survives a crash of the process,
 * and a power cut once a later commit is synced).
 */
export class NodeSqliteDialect implements Dialect {
  readonly #db: DatabaseSync;
  readonly #group: WriteGroup;
  readonly #sync: WalSync;

  /**
   * `db` stays owned by the caller: destroying the Kysely instance does not close it. `group` is `db`'s write group;
   * the Kysely instance must carry its `WriteGroupPlugin`, which answers a grouped write once it has committed.
   * `sync` is `db`'s WAL syncer, which a transaction's commit waits for.
   */
  constructor(db: DatabaseSync, group: WriteGroup, sync: WalSync) {
    this.#db = db;
    this.#group = group;
    this.#sync = sync;
  }

  createDriver(): Driver {
    return new NodeSqliteDriver(new NodeSqliteConnection(this.#db, this.#group, this.#sync));
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

/**
 * SQLite's adapter, telling Kysely not to lock the connection itself: the driver lends it (connection-lease.ts), so a
 * transaction waiting for its sync does not hold up the next one.
 */
class NodeSqliteAdapter extends SqliteAdapter {
  override get supportsMultipleConnections(): boolean {
    return true;
  }
}

class NodeSqliteDriver implements Driver {
  readonly #connection: NodeSqliteConnection;
  readonly #lock = new ConnectionLock();

  constructor(connection: NodeSqliteConnection) {
    this.#connection = connection;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.#lock.acquire();
    return new ConnectionLease(this.#connection, this.#lock);
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

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    if (connection instanceof ConnectionLease) connection.end();
  }

  async destroy(): Promise<void> {}
}

/**
 * What a statement does to the connection's transactions: `read` nothing; `write` changes data (grouped outside an
 * explicit transaction); `begin`, `commit` and `rollback` open and close an explicit one; `session` must run outside
 * any group (a pragma: `synchronous` cannot change inside a transaction); `relax` is a `synchronous` pragma lowering
 * the setting, which inside an explicit transaction relaxes that transaction's commit (see NodeSqliteDialect).
 */
type StatementRole = 'read' | 'write' | 'begin' | 'commit' | 'rollback' | 'session' | 'relax';

/**
 * A prepared statement, whether it returns rows (a SELECT, or a write with RETURNING), and whether it is an INSERT,
 * UPDATE or DELETE (whose change count says whether it wrote anything), all known once.
 */
interface PreparedStatement {
  statement: StatementSync;
  reader: boolean;
  dml: boolean;
}

/** A connection's prepared statement with its role, known once. */
interface Prepared extends PreparedStatement {
  role: StatementRole;
}

class NodeSqliteConnection implements LendableConnection {
  readonly #db: DatabaseSync;
  readonly #group: WriteGroup;
  readonly #sync: WalSync;
  readonly #statements = new Map<string, Prepared>();
  /** An explicit transaction (Kysely's, between `begin` and `end`) is open: its writes are not grouped. */
  #inTransaction = false;
  /** The open explicit transaction's commit needn't wait for the sync (it ran a `relax` pragma). */
  #relaxed = false;
  /** A write of the open explicit transaction changed something (else its commit has nothing to sync). */
  #changed = false;

  constructor(db: DatabaseSync, group: WriteGroup, sync: WalSync) {
    this.#db = db;
    this.#group = group;
    this.#sync = sync;
  }

  async executeQuery<R>(compiled: CompiledQuery, committed: () => void): Promise<QueryResult<R>> {
    const cached = this.#statements.get(compiled.sql);
    const role = cached?.role ?? roleOf(compiled);
    if (role === 'relax' && this.#inTransaction) {
      this.#relaxed = true;
      return { rows: [] };
    }
    // A pragma is evaluated as it is prepared, and must not run inside the group's transaction; BEGIN must not either.
    const pragma = role === 'session' || role === 'relax';
    if (role === 'begin' || (pragma && !this.#inTransaction)) this.#group.commitNow();
    const prepared = cached ?? this.#prepare(compiled, role);
    switch (prepared.role) {
      case 'read':
      case 'session':
      case 'relax':
        return runPrepared<R>(prepared, compiled);
      case 'write': {
        const changed = (result: QueryResult<R>) => changedSomething(prepared, result);
        if (!this.#inTransaction)
          return this.#group.write(compiled.queryId, () => runPrepared<R>(prepared, compiled), changed);
        const result = runPrepared<R>(prepared, compiled);
        if (changed(result)) this.#changed = true;
        return result;
      }
      case 'begin': {
        // A failed BEGIN opened nothing.
        const result = runPrepared<R>(prepared, compiled);
        this.#inTransaction = true;
        this.#relaxed = false;
        this.#changed = false;
        return result;
      }
      case 'commit': {
        // A failed COMMIT leaves the transaction open (Kysely rolls it back next); a done one is answered once synced.
        const result = runPrepared<R>(prepared, compiled);
        this.#inTransaction = false;
        const sync = this.#changed && !this.#relaxed;
        committed();
        if (sync) await this.#sync.durable();
        return result;
      }
      case 'rollback':
        this.#inTransaction = false;
        // Nothing to roll back after a COMMIT that SQLite undid itself, or one that committed but failed to sync.
        if (!this.#db.isTransaction) return { rows: [] };
        return runPrepared<R>(prepared, compiled);
    }
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
  const dml =
    InsertQueryNode.is(compiled.query) ||
    UpdateQueryNode.is(compiled.query) ||
    DeleteQueryNode.is(compiled.query) ||
    (RawNode.is(compiled.query) && /^\s*(insert|update|delete)\b/i.test(compiled.sql));
  return { statement, reader, dml };
}

/** Whether a write statement may have changed the database: any DDL, or DML that changed or returned a row. */
function changedSomething({ dml }: PreparedStatement, result: QueryResult<unknown>): boolean {
  return !dml || result.rows.length > 0 || (result.numAffectedRows ?? 0n) > 0n;
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
  if (/^pragma\s+synchronous\s*=\s*(normal|off|[01])\s*;?$/.test(sql.trimEnd())) return 'relax';
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
