import type { DatabaseSync } from 'node:sqlite';
import { transaction } from './database.ts';

/**
 * What claiming a key found:
 * - `new`: nobody had it; it is now claimed by this process — run the request.
 * - `taken-over`: claimed by a daemon process that died before recording an answer — claimed by this one now; run the
 *   request again (its effects commit with the answer or are keyed downstream, so the first run left none behind).
 * - `replay`: answered before: `response` is the first answer.
 * - `in-progress`: claimed by this process and still running.
 * - `mismatch`: the key was used for a different request.
 */
export type KeyClaim =
  | { kind: 'new' }
  | { kind: 'taken-over' }
  | { kind: 'replay'; response: string }
  | { kind: 'in-progress' }
  | { kind: 'mismatch' };

interface Row {
  request_hash: string;
  state: string;
  owner: string;
  response: string | null;
}

/** The durable idempotency keys (table of idempotency-migrations.ts), shared by every keyed surface. */
export class IdempotencyKeyStore {
  #db: DatabaseSync;
  #owner: string;

  /** `owner`: an id unique to this daemon process, telling its own claims from those of a process that died. */
  constructor(db: DatabaseSync, owner: string) {
    this.#db = db;
    this.#owner = owner;
  }

  /** Claims (scope, key) for a request whose canonical body hashes to `hash` (see KeyClaim). Committed on return. */
  claim(scope: string, key: string, hash: string, now: number): KeyClaim {
    return transaction(this.#db, () => {
      const row = this.#db.prepare('SELECT request_hash, state, owner, response FROM idempotency_keys WHERE scope = ? AND key = ?').get(scope, key) as
        | Row
        | undefined;
      if (!row) {
        this.#db
          .prepare(`INSERT INTO idempotency_keys (scope, key, request_hash, state, owner, created_at, updated_at) VALUES (?, ?, ?, 'started', ?, ?, ?)`)
          .run(scope, key, hash, this.#owner, now, now);
        return { kind: 'new' };
      }
      if (row.request_hash !== hash) return { kind: 'mismatch' };
      if (row.state === 'done' && row.response !== null) return { kind: 'replay', response: row.response };
      if (row.owner === this.#owner) return { kind: 'in-progress' };
      this.#db.prepare('UPDATE idempotency_keys SET owner = ?, updated_at = ? WHERE scope = ? AND key = ?').run(this.#owner, now, scope, key);
      return { kind: 'taken-over' };
    });
  }

  /** Records the answer of a claimed key (joins the caller's transaction when there is one: commit it with the effect). */
  complete(scope: string, key: string, response: string, now: number): void {
    this.#db.prepare(`UPDATE idempotency_keys SET state = 'done', response = ?, updated_at = ? WHERE scope = ? AND key = ?`).run(response, now, scope, key);
  }

  /** Drops a claim whose request failed without effect, so that a retry runs it. */
  release(scope: string, key: string): void {
    this.#db.prepare(`DELETE FROM idempotency_keys WHERE scope = ? AND key = ? AND state = 'started'`).run(scope, key);
  }

  /** Runs `fn` in one transaction (an effect and its `complete`). */
  atomically<T>(fn: () => T): T {
    return transaction(this.#db, fn);
  }

  /** Deletes keys claimed before `before`; a later repeat runs as a new request. Returns how many. */
  prune(before: number): number {
    return Number(this.#db.prepare('DELETE FROM idempotency_keys WHERE created_at < ?').run(before).changes);
  }
}
