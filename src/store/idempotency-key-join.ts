// TRANSITIONAL (issue 9 item 5): the one part of the idempotency keys still on synchronous node:sqlite. A keyed
// request's answer must commit in the same transaction as its effect, and the coding sessions' store is not on Kysely
// yet: its `insertLaunched` calls back inside its own synchronous transaction. Once it takes a Kysely transaction, its
// caller passes it to `KeyCommit.commitIn` (IdempotencyKeyStore's `complete(…, trx)`, as the hooks' heartbeat event
// does) and this file goes.
import type { DatabaseSync } from 'node:sqlite';

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
}
