import type {
  ColumnDefinitionBuilder,
  Compilable,
  CreateIndexBuilder,
  CreateTableBuilder,
  Kysely,
  SqlBool,
} from 'kysely';
import { sql } from 'kysely';
import type { Database } from '../tables/index.ts';

/** The two databases the store speaks: SQLite (embedded default) and PostgreSQL. */
export type DialectName = 'sqlite' | 'postgres';

/**
 * What a migration step builds its schema with: the query builder of the database it runs on and the few column
 * shapes that differ between the two. Steps return builders; the runner compiles and runs them (synchronously on
 * SQLite, before anything else touches the file).
 */
export interface SchemaKit {
  db: Kysely<Database>;
  dialect: DialectName;
  /** Integers and epoch-millisecond times: INTEGER on SQLite (64-bit already), BIGINT on PostgreSQL. */
  int: 'integer' | 'bigint';
  /** Amounts in dollars: REAL on SQLite, DOUBLE PRECISION on PostgreSQL. */
  real: 'real' | 'double precision';
  /** An ever-increasing integer primary key (SQLite AUTOINCREMENT, PostgreSQL identity). */
  serial: (column: ColumnDefinitionBuilder) => ColumnDefinitionBuilder;
  /** SQLite's WITHOUT ROWID for tables keyed by their primary key alone; nothing on PostgreSQL. */
  withoutRowid: <T extends string, C extends string>(table: CreateTableBuilder<T, C>) => CreateTableBuilder<T, C>;
  /** A partial index's condition, written once in SQL both databases read the same way. */
  partial: <C extends string>(index: CreateIndexBuilder<C>, condition: string) => CreateIndexBuilder<C>;
}

/** A numbered schema change; applied once, in order, inside a transaction, on either database. */
export interface Migration {
  version: number;
  name: string;
  up: (kit: SchemaKit) => readonly Compilable[];
}

/** The schema kit of `db` speaking `dialect`. */
export function schemaKit(db: Kysely<Database>, dialect: DialectName): SchemaKit {
  const sqlite = dialect === 'sqlite';
  return {
    db,
    dialect,
    int: sqlite ? 'integer' : 'bigint',
    real: sqlite ? 'real' : 'double precision',
    serial: (column) =>
      sqlite ? column.primaryKey().autoIncrement() : column.primaryKey().generatedByDefaultAsIdentity(),
    withoutRowid: (table) => (sqlite ? table.modifyEnd(sql`without rowid`) : table),
    partial: (index, condition) => index.where(() => sql<SqlBool>`${sql.raw(condition)}`),
  };
}
