import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from './tables/index.ts';

/**
 * Secrets every node of a cluster shares (the gateway, hooks and web tokens), in `cluster_secrets`: the first node to
 * ask makes one (32 random bytes, hex) and every later ask, on any node, reads that one.
 */
export class ClusterSecretStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** The secret named `name`, made on first use; the same value on every node. */
  async ensure(name: string, now: number): Promise<string> {
    await this.#db
      .insertInto('cluster_secrets')
      .values({ name, value: randomBytes(32).toString('hex'), created_at: now })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    const row = await this.#db
      .selectFrom('cluster_secrets')
      .select('value')
      .where('name', '=', name)
      .executeTakeFirstOrThrow();
    return row.value;
  }
}
