// Hot-path queries built and compiled once, then run with new values: building and compiling a Kysely query costs far
// more than running it on SQLite, so a statement run for every message reuses its compiled form.
import type { CompiledQuery } from 'kysely';

/**
 * A query compiled once with placeholder values, run with new values in the same parameter positions. The builder
 * still writes the SQL for each dialect; only the bound values change. The placeholders must be distinct, so the
 * constructor can check that the compiled parameters are exactly them, in the order the values will be given.
 */
export class QueryTemplate<R> {
  readonly #compiled: CompiledQuery<R>;

  /** `compiled`: the query built with `placeholders` as its values, in the order `bind` will receive them. */
  constructor(compiled: CompiledQuery<R>, placeholders: readonly unknown[]) {
    const { parameters } = compiled;
    if (new Set(placeholders).size !== placeholders.length) throw new Error('query template: the placeholders must be distinct');
    if (parameters.length !== placeholders.length || parameters.some((p, i) => p !== placeholders[i])) {
      throw new Error(`query template: the compiled parameters are not the placeholders in order (${compiled.sql})`);
    }
    this.#compiled = compiled;
  }

  /** The compiled query with `values` bound in place of the placeholders (same count, same order). */
  bind(values: readonly unknown[]): CompiledQuery<R> {
    if (values.length !== this.#compiled.parameters.length) {
      throw new Error(`query template: ${values.length} values for ${this.#compiled.parameters.length} parameters`);
    }
    return { ...this.#compiled, parameters: values };
  }
}
