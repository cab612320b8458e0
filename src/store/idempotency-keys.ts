import type { Kysely, Transaction } from 'kysely';
import type { Database } from './tables/index.ts';

/**
 * What claiming a key found:
 * - `new`: nobody had it; it is now claimed by this process — run the request.
 * - `taken-over`: claimed by a daemon process that died before recording an answer — claimed by this one now; run the
 *   request again (its effects commit with the answer or are keyed downstream, so the first run left none behind).
 * - `replay`: answered before: `response` is the first answer.
 * - `in-progress`: claimed by this process, or by a node of the cluster that is up, and still running.
 * - `mismatch`: the key was used for a different request.
 */
export type KeyClaim =
  | { kind: 'new' }
  | { kind: 'taken-over' }
  | { kind: 'replay'; response: string }
  | { kind: 'in-progress' }
  | { kind: 'mismatch' };

/** The durable idempotency keys (table of idempotency-migrations.ts), shared by every keyed surface. */
export class IdempotencyKeyStore {
  #db: Kysely<Database>;
  #owner: string;

  /**
   * `owner`: an id unique to this daemon process — its node's incarnation (`cluster_nodes.incarnation`) — telling its own
   * claims, and those of a live node of the cluster, from those of a process that died.
   */
  constructor(db: Kysely<Database>, owner: string) {
    this.#db = db;
    this.#owner = owner;
  }

  /**
   * Claims (scope, key) for a request whose canonical body hashes to `hash` (see KeyClaim); committed when this
   * resolves. Each step is one statement: an insert that does nothing when the key exists, or a compare-and-swap of a
   * dead owner's claim, so two daemons claiming at once never both win.
   */
  async claim(scope: string, key: string, hash: string, now: number): Promise<KeyClaim> {
    for (;;) {
      const inserted = await this.#db
        .insertInto('idempotency_keys')
        .values({
          scope,
          key,
          request_hash: hash,
          state: 'started',
          owner: this.#owner,
          created_at: now,
          updated_at: now,
        })
        .onConflict((oc) => oc.columns(['scope', 'key']).doNothing())
        .returning('state')
        .executeTakeFirst();
      if (inserted) return { kind: 'new' };
      const row = await this.#db
        .selectFrom('idempotency_keys')
        .select(['request_hash', 'state', 'owner', 'response'])
        .where('scope', '=', scope)
        .where('key', '=', key)
        .executeTakeFirst();
      if (!row) continue; // released or pruned since the insert: claim it anew
      if (row.request_hash !== hash) return { kind: 'mismatch' };
      if (row.state === 'done' && row.response !== null) return { kind: 'replay', response: row.response };
      if (row.owner === this.#owner || (await this.#ownerIsUp(row.owner))) return { kind: 'in-progress' };
      const taken = await this.#db
        .updateTable('idempotency_keys')
        .set({ owner: this.#owner, updated_at: now })
        .where('scope', '=', scope)
        .where('key', '=', key)
        .where('owner', '=', row.owner)
        .where('state', '=', row.state)
        .returning('state')
        .executeTakeFirst();
      if (taken) return { kind: 'taken-over' };
      // Another process changed the claim since it was read: look again.
    }
  }

  /** True when `owner` is the incarnation of a node the cluster holds up (its claim may still be running there). */
  async #ownerIsUp(owner: string): Promise<boolean> {
    const row = await this.#db
      .selectFrom('cluster_nodes')
      .select('name')
      .where('incarnation', '=', owner)
      .where('status', '=', 'up')
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Records the answer of a claimed key; committed when this resolves, or, given `trx`, written in that transaction
   * (so it commits with the effect written there, see `atomically`).
   */
  async complete(
    scope: string,
    key: string,
    response: string,
    now: number,
    trx?: Transaction<Database>,
  ): Promise<void> {
    await (trx ?? this.#db)
      .updateTable('idempotency_keys')
      .set({ state: 'done', response, updated_at: now })
      .where('scope', '=', scope)
      .where('key', '=', key)
      .execute();
  }

  /**
   * Runs `fn` in one transaction of the keys' database and resolves to its result once it committed: an effect written
   * through `trx` and `complete(…, trx)` commit together or not at all.
   */
  async atomically<T>(fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    return this.#db.transaction().execute(fn);
  }

  /** Drops a claim whose request failed without effect, so that a retry runs it; committed when this resolves. */
  async release(scope: string, key: string): Promise<void> {
    await this.#db
      .deleteFrom('idempotency_keys')
      .where('scope', '=', scope)
      .where('key', '=', key)
      .where('state', '=', 'started')
      .execute();
  }

  /** Deletes keys claimed before `before`; a later repeat runs as a new request. Resolves how many. */
  async prune(before: number): Promise<number> {
    const result = await this.#db.deleteFrom('idempotency_keys').where('created_at', '<', before).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
