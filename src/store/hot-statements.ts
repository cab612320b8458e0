import { CompiledQuery } from 'kysely';
import type { Compilable, Kysely, QueryResult } from 'kysely';
import type { Database } from './tables/index.ts';

/** Stands for the value of one slot while a statement's text is compiled (Kysely only collects it as a parameter). */
class Slot {
  readonly index: number;

  constructor(index: number) {
    this.index = index;
  }
}

/** Where each parameter of a compiled text comes from: a slot of the call's values, or a constant of the builder. */
type Binding = { slot: number } | { constant: unknown };

/** How many statement shapes one instance keeps (each shape is one SQL text; the store has a handful). */
const MAX_SHAPES = 256;

/**
 * Hot statements (on the path of every webhook delivery) built by the query builder ONCE per shape and then run with
 * each call's values: building and compiling a Kysely query costs several times what SQLite takes to run it. `build`
 * receives `slot(i)`, a stand-in for the i-th value, and writes the query as usual; the compiled text records where
 * each slot landed among its parameters (constants the builder added stay as they are), so a later call binds every
 * value exactly where the builder put it. The dialect then reuses its prepared statement for the text.
 */
export class HotStatements {
  readonly #shapes = new Map<string, { sql: string; bindings: Binding[] }>();

  /**
   * Runs the statement `shape` (a name that fixes the SQL text, including list lengths) on `db` (always the same
   * database, or a transaction of it: the text is its dialect's) with `values`; resolves its result (rows, and for a
   * write the number of rows it changed).
   */
  async execute<R>(db: Kysely<Database>, shape: string, values: readonly unknown[], build: (slot: <T>(index: number) => T) => Compilable<R>): Promise<QueryResult<R>> {
    let compiled = this.#shapes.get(shape);
    if (!compiled) {
      const query = build(<T>(index: number) => new Slot(index) as T).compile();
      compiled = {
        sql: query.sql,
        bindings: query.parameters.map((p): Binding => (p instanceof Slot ? { slot: p.index } : { constant: p })),
      };
      if (this.#shapes.size < MAX_SHAPES) this.#shapes.set(shape, compiled);
    }
    const parameters = compiled.bindings.map((b) => ('slot' in b ? values[b.slot] : b.constant));
    return db.executeQuery<R>(CompiledQuery.raw(compiled.sql, parameters));
  }

  /** `execute`, resolving the rows only (a SELECT, or a write's RETURNING). */
  async rows<R>(db: Kysely<Database>, shape: string, values: readonly unknown[], build: (slot: <T>(index: number) => T) => Compilable<R>): Promise<R[]> {
    return (await this.execute(db, shape, values, build)).rows;
  }
}
