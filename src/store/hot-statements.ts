// The store's one way to build a hot statement once and run it again with new values (house rule: each shape written
// once). Every store whose statement runs per message, per delivery or per page read goes through HotStatements.
import type { Compilable, Kysely, QueryResult } from 'kysely';
import { CompiledQuery } from 'kysely';
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

/** One statement shape compiled: its text, where its parameters come from, and how many values a call gives. */
interface Shape {
  sql: string;
  bindings: Binding[];
  slots: number;
}

/** The `slot` a builder receives: `slot<T>(i)` stands for the i-th value of each call, typed as the column wants. */
export type SlotOf = <T>(index: number) => T;

/**
 * How many statement shapes one instance keeps (each shape is one SQL text: a session list has a few per status count
 * and one per number of ids it re-reads, up to half a page). More are compiled per call, not kept.
 */
const MAX_SHAPES = 1_024;

/**
 * Hot statements built by the query builder ONCE per shape and then run with each call's values: building and
 * compiling a Kysely query costs several times what SQLite takes to run it. `build` receives `slot(i)`, a stand-in for
 * the i-th value, and writes the query as usual (for every dialect); the compiled text records where each slot landed
 * among its parameters (constants the builder added stay as they are), so a later call binds every value exactly where
 * the builder put it, whatever order the SQL holds them in. The dialect then reuses its prepared statement for the
 * text. A shape is compiled once, so its text must not depend on the values, only on the shape's name (which counts
 * list lengths, "with a cursor or not", …); every value must land among the parameters (checked when compiled), and
 * every call gives as many values as the shape has slots (checked on every call).
 */
export class HotStatements {
  readonly #shapes = new Map<string, Shape>();

  /**
   * Runs the statement `shape` (a name that fixes the SQL text, including list lengths) on `db` (always the same
   * database, or a transaction of it: the text is its dialect's) with `values`; resolves its result (rows, and for a
   * write the number of rows it changed).
   */
  async execute<R>(
    db: Kysely<Database>,
    shape: string,
    values: readonly unknown[],
    build: (slot: SlotOf) => Compilable<R>,
  ): Promise<QueryResult<R>> {
    let compiled = this.#shapes.get(shape);
    if (!compiled) {
      compiled = compileShape(shape, values.length, build);
      if (this.#shapes.size < MAX_SHAPES) this.#shapes.set(shape, compiled);
    } else if (values.length !== compiled.slots) {
      throw new Error(`hot statement ${shape}: ${values.length} values for ${compiled.slots} slots`);
    }
    const parameters = compiled.bindings.map((b) => ('slot' in b ? values[b.slot] : b.constant));
    return db.executeQuery<R>(CompiledQuery.raw(compiled.sql, parameters));
  }

  /** `execute`, resolving the rows only (a SELECT, or a write's RETURNING). */
  async rows<R>(
    db: Kysely<Database>,
    shape: string,
    values: readonly unknown[],
    build: (slot: SlotOf) => Compilable<R>,
  ): Promise<R[]> {
    return (await this.execute(db, shape, values, build)).rows;
  }
}

/** The shape `build` writes for `slots` values; refused when one of them is missing from its parameters. */
function compileShape(shape: string, slots: number, build: (slot: SlotOf) => Compilable<unknown>): Shape {
  const query = build(<T>(index: number) => new Slot(index) as T).compile();
  const bindings = query.parameters.map((p): Binding => (p instanceof Slot ? { slot: p.index } : { constant: p }));
  const bound = new Set(bindings.flatMap((b) => ('slot' in b ? [b.slot] : [])));
  for (let i = 0; i < slots; i++) {
    if (!bound.has(i))
      throw new Error(`hot statement ${shape}: slot ${i} of ${slots} is not among the parameters of ${query.sql}`);
  }
  if (bound.size !== slots) throw new Error(`hot statement ${shape}: slots beyond the ${slots} values in ${query.sql}`);
  return { sql: query.sql, bindings, slots };
}
