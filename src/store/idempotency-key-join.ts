// TRANSITIONAL (issue 9 item 5): the one part of the idempotency keys still on synchronous node:sqlite. A keyed
// request's answer must commit in the same transaction as its effect, and the effects' stores are not on Kysely yet:
// the coding sessions' `insertLaunched` calls back inside its own synchronous transaction, and the hooks' heartbeat
// event is queued by the synchronous heartbeat store. Once those stores take a Kysely transaction, their callers pass
// it to an async `complete(…, trx)` on IdempotencyKeyStore and this file goes.
import type { DatabaseSync } from 'node:sqlite';
import { transaction } from './database.ts';

/** Records idempotency answers inside the synchronous transaction of a store not yet on Kysely (see above). */
export class IdempotencyKeyJoin {
  #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /** Records the answer of a claimed key in the caller's open transaction (so it commits with the effect). */
  complete(scope: string, key: string, response: string, now: number): void {
    this.#db.prepare(`UPDATE idempotency_keys SET state = 'done', response = ?, updated_at = ? WHERE scope = ? AND key = ?`).run(response, now, scope, key);
  }

  /** Runs `fn` in one synchronous transaction (an effect of a synchronous store and its `complete`). */
  atomically<T>(fn: () => T): T {
    return transaction(this.#db, fn);
  }
}
